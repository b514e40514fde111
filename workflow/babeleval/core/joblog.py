"""Logging for workflow jobs: everything a job says goes to its Snakemake log file.

A job that fails on a user's mistake (a :class:`~babeleval.core.errors.BabelevalError`:
bad data, a bad template, a backend that cannot do what was asked) logs one
line, ``ERROR <message naming the file and row, line or key>``, with no
traceback; any other exception is a bug and is logged with its traceback.
Either way it lands in the log file, which Snakemake shows for a failed job.
Every record passes :class:`~babeleval.core.redact.RedactingFilter` first, so no
message or traceback carries a secret.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from pathlib import Path

from . import extensions, orphan_guard, paths
from .errors import BabelevalError
from .redact import RedactingFilter

log = logging.getLogger("babeleval")


# Errors of the machine rather than of babeleval: said with the path, never as a bug.
_DISK_ERRORS = {errno.ENOSPC: ("write", "the disk is full: free space on it and run again"),
                errno.EDQUOT: ("write", "the disk quota is used up: free space or raise the quota, and run again"),
                errno.EROFS: ("write", "the file system is read-only: run where results can be written"),
                errno.EACCES: ("open", "check the permissions of the file and its directory"),
                errno.EMFILE: ("open", "too many open files: raise the limit (ulimit -n)")}


def disk_problem(exc: BaseException, tb) -> str | None:
    """``path: what went wrong; what to do`` for an OSError that is the machine's, else None.

    The path is the error's own filename, or else the innermost ``path`` being written when it was raised (an
    error from ``write`` on an open file carries no filename).
    """
    if not isinstance(exc, OSError) or exc.errno not in _DISK_ERRORS:
        return None
    path = exc.filename
    innermost = None
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("path")
        if isinstance(candidate, (str, os.PathLike)):
            innermost = candidate
        tb = tb.tb_next
    path = path if path is not None else innermost
    where = os.fspath(path) if path is not None else "a file (no path given)"
    verb, advice = _DISK_ERRORS[exc.errno]
    return f"cannot {verb} {where}: {os.strerror(exc.errno)}; {advice}"


# The Hugging Face hub's errors, by class name (the job need not import huggingface_hub to recognise them):
# a model that cannot be fetched is the machine's or the entry's problem, not ours.
_HUB_ERRORS = {
    "LocalEntryNotFoundError": "there is no network (or HF_HUB_OFFLINE is set) and the model is not in the local "
                               "hub cache: download it where there is network (huggingface-cli download <id>), or "
                               "point model at a local directory",
    "OfflineModeIsEnabled": "HF_HUB_OFFLINE is set and the model is not in the local hub cache: download it first",
    "RepositoryNotFoundError": "check the model id in params.yaml (and HF_TOKEN, for a private model)",
    "GatedRepoError": "accept the model's terms on its hub page, and set HF_TOKEN to a token of that account",
    "RevisionNotFoundError": "check the model's revision in params.yaml",
}


def hub_problem(exc: BaseException) -> str | None:
    """What to do when a hub model could not be fetched, from the error or one it was raised from; else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        advice = _HUB_ERRORS.get(type(exc).__name__)
        if advice:
            first_line = (str(exc).strip().splitlines() or [""])[0]
            return f"the model could not be fetched from the Hugging Face hub ({type(exc).__name__}: {first_line}); " \
                   f"{advice}"
        exc = exc.__cause__ or exc.__context__
    return None


def _report(exc_type, exc, tb) -> None:
    disk = disk_problem(exc, tb)
    hub = hub_problem(exc)
    if issubclass(exc_type, BabelevalError):
        log.error("%s", exc)
    elif disk or hub:
        log.error("%s", disk or hub)
    elif issubclass(exc_type, KeyboardInterrupt):
        log.error("interrupted")
    else:
        log.error("unexpected %s (a bug, not a problem with your inputs):", exc_type.__name__,
                  exc_info=(exc_type, exc, tb))


def job_label(log_file: str | None) -> str:
    """The job a log file belongs to, from its path (``paths.log``): ``results/logs/score/m/belebele/eng_Latn/paper.log``
    is ``score m/belebele/eng_Latn/paper``, so that a console line of several jobs running at once says whose it is."""
    if not log_file:
        return "babeleval"
    parts, logs = Path(log_file).with_suffix("").parts, Path(paths.LOGS).parts
    if parts[:len(logs)] != logs or len(parts) == len(logs):
        return Path(log_file).stem  # a log outside the workflow's folder (a test's, a tool's)
    rule, *combination = parts[len(logs):]
    return " ".join([rule, "/".join(combination)]) if combination else rule


def setup(log_file: str | None) -> None:
    """A job's start: its log on the console and in its log file, each line naming the job and its combination
    (:func:`job_label`), the extension files of the run's params.yaml loaded (``babeleval.core.extensions``), and
    its Snakemake watched (``babeleval.core.orphan_guard``)."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, mode="w", encoding="utf-8"))
    for handler in handlers:
        handler.addFilter(RedactingFilter())
    label = job_label(log_file).replace("%", "%%")
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [{label}] %(levelname)s %(name)s: %(message)s",
                        handlers=handlers, force=True)
    sys.excepthook = _report
    extensions.load_exported()
    orphan_guard.watch_snakemake()  # the job stops when its Snakemake dies (a SIGKILL cannot stop it)
