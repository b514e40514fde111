"""Response cache: a rerun pays only for prompts never answered, and a killed job resumes.

One SQLite file per model. A key is the hash of (model fingerprint, request
kind, decoding settings including the seed, exact prompt and continuations).
Results are committed batch by batch, so everything finished before a crash
is kept. SQLite's WAL mode lets concurrent jobs of one model share the file.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable

from .fingerprint import digest
from .jsonl import dumps


def request_key(fingerprint: dict[str, Any], kind: str, settings: dict[str, Any], payload: dict[str, Any]) -> str:
    return digest({"fingerprint": fingerprint, "kind": kind, "settings": settings, "payload": payload})


class ResponseCache:
    def __init__(self, path: str | Path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=60)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.db.commit()

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(keys)
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            rows = self.db.execute(
                f"SELECT key, value FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            found.update((key, json.loads(value)) for key, value in rows)
        return found

    def put_many(self, entries: dict[str, dict[str, Any]]) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                                [(key, dumps(value)) for key, value in entries.items()])

    def close(self) -> None:
        self.db.close()


class NoCache:
    """Stands in when the cache is turned off in params.yaml."""

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        return {}

    def put_many(self, entries: dict[str, dict[str, Any]]) -> None:
        pass

    def close(self) -> None:
        pass
