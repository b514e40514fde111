"""JSON Lines reading and atomic writing.

Every file the workflow produces is written to a temporary file in the same
directory and renamed into place, so a killed job never leaves a truncated
file that looks complete.
"""

from __future__ import annotations

import glob
import json
import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from .errors import DataError


# A lone surrogate (what a model's or an API's broken unicode escape decodes to) has no UTF-8 encoding.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogates(text: str) -> str:
    """Write lone surrogates as JSON escapes: the file stays valid UTF-8 and reads back to the same string."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# The same escape, made by the file's encoder as it writes: its ``backslashreplace`` writes a lone surrogate as
# ``\\udXXX``, which inside a JSON string is that surrogate's escape, at no cost where there is none (a JSON
# Lines file of prompts is tens of megabytes: a regular expression over every line was a third of its writing).
_JSON_TEXT_ERRORS = "backslashreplace"


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


def _canonical(obj: Any, indent: int | None = None) -> str:
    """One canonical JSON encoding, so reruns are byte-identical; lone surrogates left as they are."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=indent, allow_nan=False)


def dumps(obj: Any) -> str:
    """The canonical encoding as valid UTF-8 text (lone surrogates escaped)."""
    return _escape_surrogates(_canonical(obj))


def remove_stale_temporaries(path: str | os.PathLike) -> None:
    """Delete temporary files a killed writer of ``path`` left behind (only one job writes a given output)."""
    path = Path(path)
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        stale.unlink(missing_ok=True)


# The files written inside ``synced_at_end()``: each made durable when the block ends, not as it is written.
_unsynced: list[Path] | None = None


@contextmanager
def synced_at_end() -> Iterator[None]:
    """Write files now, make them durable when the block ends: for a job that writes hundreds of files (a scoring
    job: three per combination), where an fsync after each one kept it waiting on the disk for a fifth of its time.
    By the end most of the data has reached the disk by itself. Safe for a job's outputs: Snakemake counts them
    made only after the job exits, so a crash before the end leaves the job marked incomplete, to be rerun."""
    global _unsynced
    outer, _unsynced = _unsynced, []
    try:
        yield
        for path in dict.fromkeys(_unsynced):
            _fsync_path(path)
        for folder in dict.fromkeys(path.parent for path in _unsynced):
            _fsync_path(folder)
    finally:
        _unsynced = outer


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", errors: str = "strict") -> Iterator[Any]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        text = "b" not in mode
        with os.fdopen(fd, mode, encoding="utf-8" if text else None, errors=errors if text else None) as handle:
            yield handle
            handle.flush()
            if _unsynced is None:
                os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; outputs get the usual permissions
        os.replace(tmp, path)
        if _unsynced is not None:
            _unsynced.append(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> None:
    with atomic_open(path, errors=_JSON_TEXT_ERRORS) as handle:
        for row in rows:
            handle.write(_canonical(row) + "\n")


def write_json(path: str | os.PathLike, obj: Any) -> None:
    with atomic_open(path, errors=_JSON_TEXT_ERRORS) as handle:
        handle.write(_canonical(obj, indent=2) + "\n")


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """Read a JSON Lines file; a malformed line stops with the file and line number.

    The file is decoded in one piece and split at newlines only (a JSON string may hold U+2028 as it is): decoding
    line by line was a sixth of the time a scoring job spent reading generations of tens of megabytes.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        lineno = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}: line {lineno}: not valid UTF-8 "
                        f"(byte {exc.start - line_start + 1} of the line)") from None
    rows = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            reason = exc.msg.removesuffix(" at")  # "Unterminated string starting at" <column>
            raise DataError(f"{path}: line {lineno}: not valid JSON ({reason}, column {exc.colno})") from None
        if not isinstance(row, dict):
            raise DataError(f"{path}: line {lineno}: expected a JSON object, got {type(row).__name__}")
        rows.append(row)
    return rows
