"""Logging for workflow jobs: everything a job says goes to its Snakemake log file.

A job that fails on a user's mistake (a :class:`~babeleval.errors.BabelevalError`:
bad data, a bad template, a backend that cannot do what was asked) logs one
line, ``ERROR <message naming the file and row, line or key>``, with no
traceback; any other exception is a bug and is logged with its traceback.
Either way it lands in the log file, which Snakemake shows for a failed job.
Every record passes :class:`~babeleval.redact.RedactingFilter` first, so no
message or traceback carries a secret.
"""

from __future__ import annotations

import logging
import sys

from .errors import BabelevalError
from .redact import RedactingFilter

log = logging.getLogger("babeleval")


def _report(exc_type, exc, tb) -> None:
    if issubclass(exc_type, BabelevalError):
        log.error("%s", exc)
    elif issubclass(exc_type, KeyboardInterrupt):
        log.error("interrupted")
    else:
        log.error("unexpected %s (a bug, not a problem with your inputs):", exc_type.__name__,
                  exc_info=(exc_type, exc, tb))


def setup(log_file: str | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, mode="w", encoding="utf-8"))
    for handler in handlers:
        handler.addFilter(RedactingFilter())
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        handlers=handlers, force=True)
    sys.excepthook = _report
