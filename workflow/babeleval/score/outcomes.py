"""The per-item outcome table: what analysis reads of a combination's scored records, in Parquet.

A combination's raw file (``results/raw/...jsonl``) keeps every scored record: its choices, exemplar ids,
fingerprints and full response (the prompt's text stays in the generations file). Analysis needs only the
outcomes, and at a real study's size (5 models x 122 languages x 4 templates x 900 items) re-reading the raw
files, prompts included as they then were, made each analysis step read 17 GB and hold every item in memory. So scoring also writes ``results/outcomes/{model}/{task}/{language}/{template}.parquet``
(``babeleval.core.paths.OUTCOMES``): one row per item, the columns of ``outcome_row``, and a step reads only the
columns it needs. The labels are the path's (``babeleval.core.paths.combo_from_path``).

Columns: ``id``; the fields analysis reads (``KEPT``: parse result, prediction, gold, answer, and the response cut
to ``RESPONSE_CHARS``); every per-item number or boolean the scorer wrote (``correct``, ``f1``, ...); and
``n_choices`` (the item's number of choices, for the chance level), null where the item has none. A column whose
values are not all of one plain type (an answer that is a list of references, an id that is sometimes a number)
is stored as JSON text and named in the file's metadata, so every value reads back as scoring wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..core.jsonl import atomic_open, dumps

# Fields analysis reads; besides these, a record keeps its numbers and booleans (per-item metrics such as f1).
KEPT = frozenset({"id", "language", "parsed", "parse_error", "response", "prediction", "gold", "answer",
                  "reasoning_script", "answer_script",
                  # where a template names an extractor (babeleval.score.extraction): where the answer came from, and
                  # what the rules and the extractor read
                  "answer_source", "rule_answer", "rule_error", "extractor_answer", "extractor_error",
                  "extractor"})
RESPONSE_CHARS = 500
# the number of choices an item offered (its chance level): the one thing of the choices analysis reads
N_CHOICES = "n_choices"
# the columns a metric never reads: a step that only recomputes metrics leaves them unread
TEXT_ONLY = ("response", "language", "reasoning_script", "answer_script", "answer_source", "rule_answer",
             "rule_error", "extractor_answer", "extractor_error", "extractor")
_JSON_COLUMNS = b"babeleval.json_columns"
_PLAIN = (bool, int, float, str)


def slim(record: dict[str, Any]) -> dict[str, Any]:
    """The fields of a scored record that analysis reads, the response shortened."""
    out = {k: v for k, v in record.items() if k in KEPT or isinstance(v, (bool, int, float)) or v is None}
    response = out.get("response")
    if isinstance(response, str) and len(response) > RESPONSE_CHARS:
        out["response"] = response[:RESPONSE_CHARS] + "..."
    return out


def outcome_row(record: dict[str, Any]) -> dict[str, Any]:
    """One row of the table: ``slim``'s fields and the item's number of choices."""
    choices = record.get("choices")
    return {**slim(record), N_CHOICES: len(choices) if isinstance(choices, list) and choices else None}


def _column(values: list[Any]):
    """A column as Arrow holds it; None where its values are not of one plain type (then stored as JSON)."""
    import pyarrow as pa

    kinds = {type(v) for v in values if v is not None}
    if len(kinds) > 1 or (kinds and next(iter(kinds)) not in _PLAIN):
        return None
    try:
        return pa.array(values)
    except (pa.ArrowException, UnicodeEncodeError):  # a lone surrogate in a model's text has no UTF-8 form
        return None


def write(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    """Write the outcome table of a combination's scored records (``babeleval.score.job``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [outcome_row(r) for r in records]
    names = list(dict.fromkeys(key for row in rows for key in row)) or ["id"]
    arrays, as_json = [], []
    for name in names:
        values = [row.get(name) for row in rows]
        array = _column(values)
        if array is None:
            as_json.append(name)
            array = pa.array([None if v is None else dumps(v) for v in values], pa.string())
        arrays.append(array)
    table = pa.table(arrays, names=names).replace_schema_metadata({_JSON_COLUMNS: json.dumps(as_json).encode()})
    with atomic_open(path, "wb") as handle:
        pq.write_table(table, handle)


def read(path: str | Path, columns: Sequence[str] | None = None, without: Sequence[str] = ()) -> list[dict[str, Any]]:
    """A combination's rows as records: ``columns`` (those the table holds; all by default) less ``without``.

    A column the table does not hold is absent from the records, as the field was from the scored records.
    """
    import pyarrow.parquet as pq

    # the file read directly, in one thread: pq.read_table (a dataset, a thread pool) took 10 times as long for a
    # table of a few hundred rows, and a study's step reads thousands
    table_file = pq.ParquetFile(path)
    schema = table_file.schema_arrow
    wanted = [c for c in (schema.names if columns is None else columns) if c in schema.names and c not in without]
    records = table_file.read(columns=wanted, use_threads=False).to_pylist()
    as_json = set(json.loads((schema.metadata or {}).get(_JSON_COLUMNS, b"[]"))) & set(wanted)
    for record in records:
        for name in as_json:
            if record[name] is not None:
                record[name] = json.loads(record[name])
    return records
