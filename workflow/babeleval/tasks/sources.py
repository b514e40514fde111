"""Where a task's rows come from: local official files or the Hugging Face hub.

The ``datasets`` import happens only when a hub source is used, so local runs
and CPU jobs never pay for it.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from ..core.errors import DataError
from ..core.jsonl import read_jsonl


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


def read_text(path: Path) -> str:
    """A file's text; bytes that are not UTF-8 stop with the line they are on (a byte-order mark is dropped)."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw[:exc.start].count(b"\n") + 1
        raise DataError(f"{path}: line {line}: not valid UTF-8 (byte {exc.start - line_start + 1} of the line)") from None


def read_json_records(path: Path, what: str) -> list[dict[str, Any]]:
    """A file of JSON records: a JSON array, or JSON Lines (JGLUE's and uhura's ``.json`` files are JSON Lines)."""
    if not path.is_file():
        raise DataError(f"{path}: no {what} file")
    text = read_text(path)
    if not text.strip():
        raise DataError(f"{path}: the file is empty (no {what} rows)")
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        if not isinstance(rows, list):
            raise DataError(f"{path}: expected a JSON array of objects or JSON Lines")
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

    Read with the csv module without quoting, so quotes inside questions stay as they are; each row
    keeps its line number under ``LINE`` (see ``place``) so that a bad value is reported on its line.
    """
    if not path.is_file():
        raise DataError(f"{path}: no {what} file")
    reader = csv.reader(io.StringIO(read_text(path), newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    lines = [(reader.line_num, cells) for cells in reader if cells and any(cell.strip() for cell in cells)]
    if not lines:
        raise DataError(f"{path}: the file is empty (no {what} rows)")
    if columns is None:
        header, lines = lines[0][1], lines[1:]
    else:
        header = list(columns)
    rows = []
    for number, cells in lines:
        if len(cells) != len(header):
            raise DataError(f"{path}: line {number}: expected {len(header)} tab-separated fields "
                            f"({', '.join(header)}), got {len(cells)}")
        rows.append({**dict(zip(header, cells)), LINE: number})
    if not rows:
        raise DataError(f"{path}: the file has a header but no {what} rows")
    return rows


# The key under which a row read from a text file keeps its line number.
LINE = "_line"


def place(row: dict[str, Any], number: int) -> str:
    """Where a row is, for messages: its line where the file's reader kept it, else its row number."""
    return f"line {row.pop(LINE)}" if LINE in row else f"row {number}"


def read_table(path: Path, what: str) -> list[dict[str, Any]]:
    """Rows of a CSV, Parquet or JSON(L) table, by extension (Hugging Face dataset exports)."""
    if not path.is_file():
        raise DataError(f"{path}: no {what} file")
    suffix = path.suffix.lower()
    if suffix in (".json", ".jsonl"):
        return read_json_records(path, what)
    if suffix == ".tsv":
        return read_tsv(path, what)
    import pandas as pd  # only for the table formats: preparing a JSON Lines dataset never pays for it

    try:
        frame = pd.read_parquet(path) if suffix == ".parquet" else \
            pd.read_csv(io.StringIO(read_text(path)), dtype=str, keep_default_na=False)
    except DataError:
        raise
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

