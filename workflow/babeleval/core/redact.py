"""Secrets out of everything a run writes: the cache, generations, raw records, logs and error messages.

Two kinds of text are masked:

- the value of every secret the process holds: environment variables whose
  name says they hold one (``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``,
  ``HF_TOKEN`` ...) and every variable an API model names in ``api_key_env``
  (registered by the backend that reads it). These are masked everywhere,
  model answers included: an endpoint that echoes the key must not put it on
  disk.
- text shaped like a credential (``Bearer <token>``, ``sk-...``, ``hf_...``) in
  error messages and logs, where a server may quote a key we never held.
  Model answers are not pattern-masked: a pattern could alter a real answer.

A masked value reads ``[redacted]``. Values shorter than 8 characters are not
treated as secrets (a variable like ``USE_TOKEN=1`` would otherwise mask every
"1").
"""

from __future__ import annotations

import logging
import os
import re
import threading
from typing import Any, Iterable

MASK = "[redacted]"
MIN_SECRET_LENGTH = 8
_SECRET_NAME = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)
_SHAPES = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{6,}"
                     r"|\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{6,}"
                     r"|\bhf_[A-Za-z0-9]{8,}")

_registered: set[str] = set()
_lock = threading.Lock()


def register(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (a key read from the variable ``api_key_env`` names)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value)


def secrets() -> list[str]:
    """Every secret value this process knows, longest first (so a key containing another is masked whole)."""
    found = {value for name, value in os.environ.items()
             if _SECRET_NAME.search(name) and len(value) >= MIN_SECRET_LENGTH}
    with _lock:
        found |= _registered
    return sorted(found, key=len, reverse=True)


def redact_values(text: str, values: list[str] | None = None) -> str:
    """``text`` with every known secret value (or each of ``values``) masked: model answers, cached records."""
    for secret in secrets() if values is None else values:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact(text: str) -> str:
    """``text`` with secret values and credential-shaped strings masked (messages, logs, server error bodies)."""
    text = redact_values(text)
    return _SHAPES.sub(lambda m: f"{m.group(1)} {MASK}" if m.group(1) else MASK, text)


def redact_record(value: Any, values: list[str] | None = None) -> Any:
    """A JSON-like value with secret values masked in every string, keys included."""
    values = secrets() if values is None else values
    if not values:
        return value
    if isinstance(value, str):
        return redact_values(value, values)
    if isinstance(value, dict):
        return {redact_record(k, values): redact_record(v, values) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_record(v, values) for v in value)
    return value


def redact_records_in_place(records: Iterable[dict[str, Any]]) -> None:
    """Mask secret values inside each record dict itself, so every holder of the dict sees the masked one."""
    values = secrets()
    if values:
        for record in records:
            cleaned = redact_record(record, values)
            record.clear()
            record.update(cleaned)


class RedactingFilter(logging.Filter):
    """Masks secrets in a log record's message and traceback before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True
