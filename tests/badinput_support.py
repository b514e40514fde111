"""Shared by the catalogue of bad inputs (tests/test_badinput_*.py; the table is in tests/README.md).

Each case breaks one thing in a fresh copy of the workflow and plans the run in-process, through the entry point
the workflow's planning calls (``babeleval.grid.plan.start``, from workflow/rules/common.smk): the plan stops, with
the one message naming the file and the key, row or line. One case of each catalogue file also runs Snakemake for
real (not a dry run): the witness that the workflow stops on the same message, with a non-zero exit, before
anything was built, loaded or generated (no model directory, no response cache, no generations).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from babeleval.grid.plan import start_in
from conftest import copy_workflow, snakemake

# What exists only once a model was built or loaded, or a generation job ran.
MODEL_TRACES = ["results/models", "results/cache", "results/generations"]


@dataclass(frozen=True)
class Checks:
    """What every case of a catalogue checks besides its own: paths that must not exist afterwards, and text the
    user must not see, both in-process and in the Snakemake witness."""
    absent: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()


NO_CHECKS = Checks()


@dataclass
class Case:
    id: str
    breaks: Callable[[Path], None]
    expect: list[str]                      # regular expressions the user's terminal output must contain
    absent: list[str] = field(default_factory=list)  # paths (relative) that must not exist afterwards
    hidden: list[str] = field(default_factory=list)  # text the user must not see (a secret from the input)

    def __repr__(self) -> str:
        return self.id


def pristine(tmp_path_factory) -> Path:
    return copy_workflow(tmp_path_factory.mktemp("pristine") / "wf", tasks=("belebele",))


def fresh_copy(pristine_dir: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "wf"
    shutil.copytree(pristine_dir, dest)
    return dest


def plan_broken(workdir: Path, case: Case, catalogue: Checks = NO_CHECKS) -> str:
    """Plan the run of the broken copy in-process, as Snakemake started in it would; return what the planning
    printed and the error it stopped with (type and message, as Snakemake prints them)."""
    printed, error = _planned_error(workdir, case)
    seen = f"{printed}{type(error).__name__}: {error}"
    _check_seen(case, seen, catalogue)
    _check_nothing_built(workdir, case, catalogue)
    return seen


def _planned_error(workdir: Path, case: Case) -> tuple[str, Exception]:
    printed = io.StringIO()
    here = Path.cwd()
    os.chdir(workdir)  # the workflow plans in its own directory: every path of params.yaml is relative to it
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            start_in(".")
    except Exception as error:  # whatever the planning stops with is what Snakemake prints
        return printed.getvalue(), error
    finally:
        os.chdir(here)
    raise AssertionError(f"{case.id}: the plan did not stop:\n{printed.getvalue()[-3000:]}")


def run_broken(workdir: Path, case: Case, catalogue: Checks = NO_CHECKS) -> str:
    """Run the whole workflow on the broken copy with Snakemake; return what the user saw."""
    proc = snakemake(workdir, check=False, timeout=300)
    seen = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"{case.id}: the run did not fail:\n{seen[-3000:]}"
    _check_seen(case, seen, catalogue)
    _check_nothing_built(workdir, case, catalogue)
    return seen


def witness(cases: list[Case], case_id: str, source: Path, tmp_path: Path, catalogue: Checks = NO_CHECKS) -> str:
    """One case of a catalogue, broken in a fresh copy of ``source``, planned in-process and run by Snakemake: the
    run stops on the planned message (the witness that the workflow plans through the same entry point), with the
    case's and the catalogue's own checks."""
    case = next(c for c in cases if c.id == case_id)
    workdir = fresh_copy(source, tmp_path)
    case.breaks(workdir)
    printed, error = _planned_error(workdir, case)
    _check_seen(case, f"{printed}{type(error).__name__}: {error}", catalogue)
    seen = run_broken(workdir, case, catalogue)
    for line in filter(None, (line.strip() for line in str(error).splitlines())):
        assert line in seen, f"{case.id}: Snakemake did not print the planned message's {line!r}:\n{seen[-3000:]}"
    return seen


def _check_seen(case: Case, seen: str, catalogue: Checks) -> None:
    for pattern in case.expect:
        assert re.search(pattern, seen), f"{case.id}: expected /{pattern}/ in what the user sees:\n{seen[-3000:]}"
    for text in [*case.hidden, *catalogue.hidden]:
        assert text not in seen, f"{case.id}: the user sees {text!r}:\n{seen[-3000:]}"


def _check_nothing_built(workdir: Path, case: Case, catalogue: Checks) -> None:
    for trace in [*MODEL_TRACES, *case.absent, *catalogue.absent]:
        assert not (workdir / trace).exists(), f"{case.id}: {trace} exists: a job ran before the problem was found"


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
