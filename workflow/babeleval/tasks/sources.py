"""Where a task's rows come from: local official files or the Hugging Face hub.

The ``datasets`` import happens only when a hub source is used, so local runs
and CPU jobs never pay for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from ..jsonl import read_jsonl


def read_local_jsonl(path: Path, language: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DataError(f"{path}: no file for language '{language}'")
    rows = read_jsonl(path)
    if not rows:
        raise DataError(f"{path}: the file is empty (no rows for language '{language}')")
    return rows


def read_hub(source: dict[str, Any], config: str, split: str, language: str) -> tuple[list[dict[str, Any]], str]:
    """Rows of one config and split of a hub dataset, and a description naming the exact source."""
    try:
        import datasets
    except ImportError:
        raise DataError("reading from the Hugging Face hub needs the 'datasets' package: pip install 'babeleval[data]'") from None
    name = source["dataset"]
    revision = source.get("revision")
    where = f"{name}@{revision or 'main'} config '{config}' split '{split}'"
    try:
        dataset = datasets.load_dataset(name, name=config, split=split, revision=revision)
    except ValueError as exc:
        if "not found" in str(exc).lower() or "unknown split" in str(exc).lower():
            raise DataError(f"{where}: the dataset has no such config or split for language '{language}' ({exc})") from None
        raise
    rows = [dict(row) for row in dataset]
    if not rows:
        raise DataError(f"{where}: no rows for language '{language}'")
    return rows, where
