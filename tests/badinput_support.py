"""Shared by the catalogue of bad inputs (tests/test_badinput_*.py; the table is in tests/README.md).

Each case breaks one thing in a fresh copy of the workflow, runs Snakemake for
real (not a dry run) and checks what the user sees: a non-zero exit, the one
message naming the file and the key, row or line, and that nothing was built,
loaded or generated (no model directory, no response cache, no generations).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from conftest import copy_workflow, snakemake

# What exists only once a model was built or loaded, or a generation job ran.
MODEL_TRACES = ["results/models", "results/cache", "results/generations"]


@dataclass
class Case:
    id: str
    breaks: Callable[[Path], None]
    expect: list[str]                      # regular expressions the user's terminal output must contain
    absent: list[str] = field(default_factory=list)  # paths (relative) that must not exist afterwards

    def __repr__(self) -> str:
        return self.id


def pristine(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("pristine") / "wf", tasks=("belebele",))


def fresh_copy(pristine_dir: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "wf"
    shutil.copytree(pristine_dir, dest)
    return dest


def run_broken(workdir: Path, case: Case) -> str:
    """Run the whole workflow on the broken copy; return what the user saw."""
    proc = snakemake(workdir, check=False, timeout=300)
    seen = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"{case.id}: the run did not fail:\n{seen[-3000:]}"
    for pattern in case.expect:
        assert re.search(pattern, seen), f"{case.id}: expected /{pattern}/ in what the user sees:\n{seen[-3000:]}"
    for trace in MODEL_TRACES + case.absent:
        assert not (workdir / trace).exists(), f"{case.id}: {trace} exists: a model ran before the problem was found"
    return seen


# -- editing helpers ------------------------------------------------------------------------------


def edit_params(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(workdir: Path) -> None:
        path = workdir / "params.yaml"
        params = yaml.safe_load(path.read_text(encoding="utf-8"))
        change(params)
        path.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return apply


def write_text(relative: str, text: str) -> Callable[[Path], None]:
    def apply(workdir: Path) -> None:
        (workdir / relative).write_text(text, encoding="utf-8")
    return apply


def replace_in(relative: str, old: str, new: str) -> Callable[[Path], None]:
    def apply(workdir: Path) -> None:
        path = workdir / relative
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return apply


def edit_template(name: str, change: Callable[[dict], None]) -> Callable[[Path], None]:
    def apply(workdir: Path) -> None:
        path = workdir / "prompts" / "belebele" / f"{name}.yaml"
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        change(spec)
        path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return apply


def edit_rows(language: str, change: Callable[[list[dict]], list[dict]]) -> Callable[[Path], None]:
    """Change the rows of a bundled Belebele file (one JSON object a line)."""
    def apply(workdir: Path) -> None:
        path = workdir / "data" / "samples" / "belebele" / f"{language}.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = change(rows)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return apply


def edit_lines(language: str, change: Callable[[list[bytes]], list[bytes]]) -> Callable[[Path], None]:
    """Change the raw lines (bytes) of a bundled Belebele file."""
    def apply(workdir: Path) -> None:
        path = workdir / "data" / "samples" / "belebele" / f"{language}.jsonl"
        path.write_bytes(b"".join(change(path.read_bytes().splitlines(keepends=True))))
    return apply
