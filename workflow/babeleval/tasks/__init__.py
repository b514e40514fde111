"""Task registry: each task module turns its dataset's official files into canonical items.

A canonical multiple-choice item is a dict::

    {"id": str, "task": str, "language": str, "group": str,
     "passage": str, "question": str, "choices": [str, ...], "answer": int}

``id`` is stable and identical across languages for parallel datasets;
``group`` names items that share a context (a Belebele passage), so few-shot
exemplars never come from the test item's own passage; ``answer`` indexes
``choices``.
"""

from __future__ import annotations

from types import ModuleType

from ..errors import ConfigError
from . import belebele

TASKS: dict[str, ModuleType] = {"belebele": belebele}


def get_task(name: str) -> ModuleType:
    try:
        return TASKS[name]
    except KeyError:
        raise ConfigError(f"unknown task '{name}' (known: {', '.join(sorted(TASKS))})") from None
