"""Provenance: what produced a scores file, so that every number can be traced back.

``for_scores`` returns one JSON-ready dict for a (model, task, language, template)
combination: the model (its params.yaml entry and fingerprint: hub id and
revision, or the weights hash of a local directory), the dataset (source, pinned
revision, sha256 of the official files read and of the prepared items), the
template's content hash, the sha256 of the exact prompts and raw generations, the
few-shot seed, the decoding settings, the versions of the packages that matter and
the code's git commit (with a dirty flag).

Nothing here is time- or host-dependent, so rerunning the same grid rewrites the
same provenance. It stays in the scores files: ``results/metrics.json`` holds
metrics only, which keeps it byte-identical across reruns.

CPU only: package versions are read from installed metadata (``importlib.metadata``),
never by importing torch or transformers.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..prompts.record import PromptRecord
from ..prompts.templates import load_template
from ..tasks import get_task
from ..tasks.base import is_local

# Distributions whose versions can change a number: the package itself, model and data libraries,
# the API client, and the tools that ran the grid. Those not installed are recorded as null.
PACKAGES = (
    "babeleval",
    "torch",
    "transformers",
    "tokenizers",
    "safetensors",
    "accelerate",
    "vllm",
    "openai",
    "datasets",
    "jinja2",
    "numpy",
    "pandas",
    "sacrebleu",
    "snakemake",
    "dvc",
)
CHUNK = 2**20


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    return dict(_installed_versions(tuple(names)))


@lru_cache(maxsize=4)
def _installed_versions(names: tuple[str, ...]) -> dict[str, str | None]:
    """Read once per process: a scoring job records them for each of its hundreds of combinations, and each
    lookup scans the installed distributions."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


@lru_cache(maxsize=8)
def git_state(root: str | Path = ".") -> dict[str, Any]:
    """The commit checked out in ``root`` and whether tracked files differ from it.

    ``--no-optional-locks`` keeps concurrent jobs (and a user's own git commands) from
    fighting over ``.git/index.lock``. Outside a git repository, or without git, the
    commit is null and ``error`` says why.
    """

    def git(*args: str) -> str:
        return subprocess.run(["git", "--no-optional-locks", "-C", str(root), *args], check=True,
                              capture_output=True, text=True, timeout=60).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except FileNotFoundError:
        return {"commit": None, "dirty": None, "error": "git is not installed"}
    except subprocess.CalledProcessError as exc:
        reason = (exc.stderr or "").strip().splitlines()
        return {"commit": None, "dirty": None, "error": reason[0] if reason else "git failed"}
    except subprocess.TimeoutExpired:
        return {"commit": None, "dirty": None, "error": "git timed out"}
    return {"commit": commit, "dirty": dirty}


def dataset_provenance(task: str, source: Mapping[str, Any], options: Mapping[str, Any],
                       reads: Iterable[tuple[str, str]], prepared_files: Iterable[str], root: str | Path = "."
                       ) -> dict[str, Any]:
    """Where the items came from: the source as configured, and hashes of what was actually read.

    ``source`` and ``options``: the task's, as validation made its entry (``babeleval.grid.records.TaskEntry``).
    ``reads``: the (language, part) pairs the combination read, ``prepared_files`` the prepared items its
    prompts were rendered from, both as its resolved record (``babeleval.prompts.record``) names them. Local sources:
    sha256 of each official file read. Hub sources: dataset id and the revision asked for (``pinned`` is
    false when none was, since a branch moves). Either way the prepared items are hashed too.
    """
    out: dict[str, Any] = {"source": source}
    if not is_local(source):
        out["revision"] = source.get("revision")
        out["pinned"] = source.get("revision") is not None
    files: dict[str, str] = {}
    prepared: dict[str, str] = {}
    base = Path(root)
    for language, part in sorted(set(reads)):
        try:
            official = get_task(task).files(dict(source), language, root, part=part, options=dict(options))
        except Exception as exc:  # provenance must not fail a scoring job: say what went wrong instead
            out.setdefault("files_error", []).append(f"{language}: {type(exc).__name__}: {exc}")
            official = []
        for path in official:
            if path.is_file():
                files[_relative(path, base)] = file_sha256(path)
    for path in sorted(base / name for name in set(prepared_files)):
        if path.is_file():
            prepared[_relative(path, base)] = file_sha256(path)
    if is_local(source):
        out["files_sha256"] = files
    out["prepared_sha256"] = prepared
    return out


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(path)


def _first_record(path: str | Path) -> dict[str, Any]:
    with Path(path).open("rb") as handle:
        for line in handle:
            if line.strip():
                return json.loads(line)
    return {}


def for_scores(*, model_entry: Mapping[str, Any], source: Mapping[str, Any], options: Mapping[str, Any],
               model: str, task: str, language: str, template: str, generations: str | Path,
               resolved: dict[str, Any], prompts: str | Path | None = None, root: str | Path = ".") -> dict[str, Any]:
    """Everything that produced the scores of one (model, task, language, template).

    ``model_entry``: the model's params.yaml entry, as the run's configuration gives it; ``source`` and
    ``options``: the task's, as validation made its entry; ``resolved`` the combination's resolved record
    (``babeleval.grid.records.CombinationRecord.as_json``), recorded as it is; ``generations`` and ``prompts`` are
    the files the scores were computed from.
    """
    record = _first_record(generations)
    template_file = load_template(task, template, root)
    prompts_record = PromptRecord.from_json(resolved["prompts"])
    plan = prompts_record.fewshot
    files = {"generations_sha256": file_sha256(generations)}
    if prompts is not None:
        files["prompts_sha256"] = file_sha256(prompts)
    return {
        "model": {
            "name": model,
            "spec": model_entry,
            # hub id + revision, or weights_sha256 of a local (or builtin) directory; as the GPU job computed it
            "fingerprint": record.get("model_fingerprint"),
        },
        "dataset": {
            "task": task,
            "language": language,
            "exemplar_languages": list(prompts_record.exemplar_languages),
            **dataset_provenance(task, source, options, prompts_record.reads(),
                                 [prompts_record.data, *prompts_record.exemplar_files], root),
            "limit": prompts_record.limit,
        },
        "template": {
            "task": task,
            "name": template,
            "path": _relative(template_file.path, Path(root)),
            "sha256": template_file.sha256,
            "mode": template_file.mode,
            "fewshot": {"n": plan.n, "sampler": plan.sampler, "language": plan.language},
        },
        "fewshot_seed": prompts_record.seed,
        "decoding": record.get("settings"),
        "spec": resolved,
        **files,
        "packages": package_versions(),
        "code": git_state(str(root)),
    }
