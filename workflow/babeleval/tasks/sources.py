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


# -- more official file formats --------------------------------------------------------------------


def read_json_records(path: Path, what: str) -> list[dict[str, Any]]:
    """A file of JSON records: a JSON array, or JSON Lines (JGLUE's and uhura's ``.json`` files are JSON Lines)."""
    if not path.is_file():
        raise DataError(f"{path}: no {what} file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise DataError(f"{path}: the file is empty (no {what} rows)")
    if text.lstrip().startswith("["):
        import json

        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        bad = [i for i, row in enumerate(rows, start=1) if not isinstance(row, dict)]
        if bad:
            raise DataError(f"{path}: row {bad[0]}: expected a JSON object")
    else:
        rows = read_jsonl(path)
    if not rows:
        raise DataError(f"{path}: the file is empty (no {what} rows)")
    return rows


def read_tsv(path: Path, what: str, columns: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Rows of a TSV file: with a header line, or with ``columns`` for a file without one (MGSM).

    Read with the csv module without quoting, so quotes inside questions stay as they are.
    """
    import csv

    if not path.is_file():
        raise DataError(f"{path}: no {what} file")
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        lines = [row for row in reader if row and any(cell.strip() for cell in row)]
    if not lines:
        raise DataError(f"{path}: the file is empty (no {what} rows)")
    if columns is None:
        header, lines, first = lines[0], lines[1:], 2
    else:
        header, first = list(columns), 1
    rows = []
    for number, cells in enumerate(lines, start=first):
        if len(cells) != len(header):
            raise DataError(f"{path}: line {number}: expected {len(header)} tab-separated fields "
                            f"({', '.join(header)}), got {len(cells)}")
        rows.append(dict(zip(header, cells)))
    if not rows:
        raise DataError(f"{path}: the file has a header but no {what} rows")
    return rows


def read_table(path: Path, what: str) -> list[dict[str, Any]]:
    """Rows of a CSV, Parquet or JSON(L) table, by extension (Hugging Face dataset exports)."""
    if not path.is_file():
        raise DataError(f"{path}: no {what} file")
    suffix = path.suffix.lower()
    if suffix in (".json", ".jsonl"):
        return read_json_records(path, what)
    if suffix == ".tsv":
        return read_tsv(path, what)
    import pandas as pd

    try:
        frame = pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path, dtype=str, keep_default_na=False)
    except Exception as exc:  # pandas raises many kinds
        raise DataError(f"{path}: cannot read the {what} table ({exc})") from None
    if frame.empty:
        raise DataError(f"{path}: the file is empty (no {what} rows)")
    return frame.to_dict(orient="records")


def find_file(directory: Path, patterns: list[str], what: str, language: str) -> Path:
    """The first existing file among ``patterns`` (globs) in ``directory``."""
    for pattern in patterns:
        found = sorted(directory.glob(pattern))
        if found:
            return found[0]
    raise DataError(f"{directory}: no {what} file for language '{language}' (looked for {', '.join(patterns)})")


def require_fields(row: dict[str, Any], fields: tuple[str, ...], where: str) -> None:
    missing = [key for key in fields if key not in row or row[key] is None]
    if missing:
        raise DataError(f"{where}: missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}")


def require_text(row: dict[str, Any], fields: tuple[str, ...], where: str) -> None:
    empty = [key for key in fields if not isinstance(row.get(key), str) or not row[key].strip()]
    if empty:
        raise DataError(f"{where}: empty or non-text field{'s' if len(empty) > 1 else ''} {', '.join(empty)}")
