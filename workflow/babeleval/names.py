"""Reading result tables back with every name as the text it was written as.

Model and template names are whatever params.yaml keys allow: `0.2`, `1e3`, `007`, `true`, `null` are names,
not numbers, booleans or missing values. pandas guesses column types when it reads a CSV, so the tables this
workflow writes are read back with their name columns as text and no NA guessing in them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

# Columns of the result tables that hold names or labels (aggregate.py, tables.py, analysis/*.py).
NAME_COLUMNS = frozenset({
    "model", "task", "language", "template", "metric", "name", "pivot", "best_template", "worst_template",
    "template_a", "template_b", "comparison", "fixed", "a", "b", "ranked", "within", "id", "example_id",
    "models_correct", "models_wrong", "reason", "top_reason", "reasons", "bucket",
})


def read_results_csv(path: str | Path) -> pd.DataFrame:
    """A result CSV: name columns as text exactly as written, an empty cell elsewhere as a missing value."""
    header = pd.read_csv(path, nrows=0).columns
    names = [c for c in header if c in NAME_COLUMNS]
    return pd.read_csv(path, dtype={c: str for c in names}, keep_default_na=False,
                       na_values={c: [""] for c in header if c not in NAME_COLUMNS})
