"""Response cache: a rerun pays only for prompts never answered, and a killed job resumes.

One SQLite file per model. A key is the hash of (model fingerprint, request
kind, decoding settings including the seed, exact prompt and continuations).
Results are committed batch by batch, so everything finished before a crash
is kept. SQLite's WAL mode lets concurrent jobs of one model share the file.

What goes in and comes out is checked:

- secrets are masked in every record before it is stored (and in records read
  from an older file), in place, so the caller's copy is the masked one too;
- a record of a failed item (``finish_reason`` ``"error: ..."``) is never
  stored: the next run asks again;
- an entry that is not a response (``{}``, a record without its answer) is a
  miss, and the count of such entries is logged;
- a file SQLite cannot read, a locked file or a full disk is a named error
  with the path and what to do, not a traceback.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..core.errors import MachineError, StateError
from .fingerprint import digest
from ..core.jsonl import dumps
from ..core.redact import redact_records_in_place

log = logging.getLogger(__name__)


def request_key(fingerprint: dict[str, Any], kind: str, settings: dict[str, Any], payload: dict[str, Any]) -> str:
    return digest({"fingerprint": fingerprint, "kind": kind, "settings": settings, "payload": payload})


def is_response(value: Any) -> bool:
    """Whether a cached value is a usable answer: a generation with its text, or one score per continuation."""
    if not isinstance(value, dict):
        return False
    if "response" in value:
        return isinstance(value["response"], str) and not _is_failure(value)
    scores, greedy = value.get("loglikelihoods"), value.get("greedy")
    return (isinstance(scores, list) and bool(scores) and isinstance(greedy, list) and len(greedy) == len(scores)
            and all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores))


def _is_failure(value: dict[str, Any]) -> bool:
    return str(value.get("finish_reason") or "").startswith("error")


def _storable(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    redact_records_in_place(entries.values())
    return {key: value for key, value in entries.items() if not _is_failure(value)}


class ResponseCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._named_errors():
            self.db = sqlite3.connect(str(path), timeout=60)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self.db.commit()

    @contextmanager
    def _named_errors(self) -> Iterator[None]:
        """SQLite's errors said as what they mean for the user, with the file and the remedy."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            text = str(exc)
            if "full" in text:
                raise MachineError(f"{self.path}: cannot write the response cache: {text}; free space on that "
                                   "disk and run again (finished responses are kept)") from None
            if "locked" in text or "busy" in text:
                raise StateError(f"{self.path}: the response cache stayed locked by another process for 60 s "
                                 f"({text}); wait for the other run to finish, or check for a stale process "
                                 "holding the file") from None
            if "unable to open" in text or "readonly" in text:
                raise StateError(f"{self.path}: cannot open the response cache for writing ({text}): check that "
                                 "the file and its directory are writable") from None
            raise StateError(f"{self.path}: the response cache cannot be read ({text}): it is damaged or not a "
                             "cache file; delete it and run again (only cached responses are lost: they are "
                             "asked for again)") from None

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(keys)
        found: dict[str, dict[str, Any]] = {}
        invalid = 0
        with self._named_errors():
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                rows = self.db.execute(
                    f"SELECT key, value FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk)
                for key, value in rows:
                    try:
                        record = json.loads(value)
                    except (TypeError, json.JSONDecodeError):
                        record = None
                    if is_response(record):
                        found[key] = record
                    else:
                        invalid += 1
        if invalid:
            log.warning("cache: %d entr%s in %s %s not a valid response (empty or damaged) and will be asked "
                        "for again", invalid, "y" if invalid == 1 else "ies", self.path,
                        "is" if invalid == 1 else "are")
        redact_records_in_place(found.values())  # a file written before masking existed
        return found

    def put_many(self, entries: dict[str, dict[str, Any]]) -> None:
        stored = _storable(entries)
        with self._named_errors(), self.db:
            self.db.executemany("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                                [(key, dumps(value)) for key, value in stored.items()])

    def close(self) -> None:
        self.db.close()


class NoCache:
    """Stands in when the cache is turned off in params.yaml; records are still masked as they pass."""

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        return {}

    def put_many(self, entries: dict[str, dict[str, Any]]) -> None:
        _storable(entries)

    def close(self) -> None:
        pass
