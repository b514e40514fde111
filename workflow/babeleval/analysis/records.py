"""Per-item outcomes, read back for analysis and labelled by the combination they belong to.

Analysis reads the outcome tables scoring writes (``results/outcomes/{model}/{task}/{language}/{template}.parquet``,
``babeleval.score.outcomes``): ids, parse results, predictions and golds, per-item numbers, the response cut
short; no prompts. Its path gives the labels. ``load_outcomes`` reads a table only when its combination is
looked up, and only the columns a step asks for, so a step that goes through the combinations one (or one
group) at a time never holds a whole grid's items (a full Belebele study is millions of records).
``load_raw`` reads the raw JSONL files themselves, slimmed to the same fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import pandas as pd

from ..core.choices import LETTERS
from ..score import outcomes
from ..score.outcomes import TEXT_ONLY, slim  # noqa: F401 (TEXT_ONLY: what a step that only recomputes metrics leaves out)
from ..score.metrics import PERCENT_UNIT, get_metric
from ..core.paths import Combo, combo_from_path
from ..core.jsonl import atomic_open, read_jsonl

# the columns each kind of step reads: a combination's right/wrong per item; its parse results
CORRECTNESS = ("id", "correct")
# what the parse-failure tables read: the parse result, and the reply's structure (babeleval.score.parsers.structure)
PARSE_RESULTS = ("id", "parsed", "parse_error", "response", "reasoning_chars", "cut_while_reasoning",
                 "answer_in_script",
                 # where a template names an extractor: both readings (babeleval.score.extraction)
                 "answer_source", "rule_answer", "extractor_answer", "extractor_asked", "extractor")


# The significance tables' columns on the metric's scale (babeleval.analysis.significance): computed on it, written
# on the scale readers see (``on_reader_scale``). Here, not in significance.py, so that the report reads them
# back without importing the significance tests' code (scipy.stats, about 0.9 s a process).
SIGNIFICANCE_SCORES = ("score_a", "score_b", "diff", "diff_low", "diff_high", "diff_se", "adj_low", "adj_high", "mde")


class Outcomes(Mapping):
    """Combination -> its outcome table's records (``columns`` of them, less ``without``), read when looked up.

    Nothing is kept: a step that needs a combination twice reads it twice (or keeps it itself).
    """

    def __init__(self, files: Iterable[str | Path], columns: Sequence[str] | None = None,
                 without: Sequence[str] = ()):
        self._files = {combo_from_path(path): str(path) for path in sorted(map(str, files))}
        self._columns, self._without = columns, tuple(without)

    def __getitem__(self, combo: Combo) -> list[dict[str, Any]]:
        return outcomes.read(self._files[combo], self._columns, self._without)

    def __iter__(self) -> Iterator[Combo]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def load_outcomes(files: Iterable[str | Path], columns: Sequence[str] | None = None,
                  without: Sequence[str] = ()) -> Outcomes:
    """Every outcome table of ``files``, keyed by combination in a stable order, each read when looked up."""
    return Outcomes(files, columns, without)


def load_raw(paths: Iterable[str | Path]) -> dict[Combo, list[dict[str, Any]]]:
    """Every raw file's records (slimmed to what analysis reads), keyed by combination, in a stable order."""
    out = {}
    for path in sorted(map(str, paths)):
        out[combo_from_path(path)] = [slim(r) for r in read_jsonl(path)]
    return out


def load_scores(paths: Iterable[str | Path]) -> dict[Combo, dict[str, Any]]:
    out = {}
    for path in sorted(map(str, paths)):
        summary = json.loads(Path(path).read_text(encoding="utf-8"))
        out[Combo(summary["model"], summary["task"], summary["language"], summary["template"])] = summary
    return out


def metric_options(summary: dict[str, Any]) -> dict[str, Any]:
    """The metric options a scores file's combination was scored with (its resolved record), if it records them."""
    record = (summary.get("provenance") or {}).get("spec") or {}
    return dict(record.get("metric_options") or {})


def headline_of(summary: dict[str, Any]) -> str | None:
    """The headline metric a scores file's combination reported (its resolved record's metrics), if it records it."""
    record = (summary.get("provenance") or {}).get("spec") or {}
    return next((entry["name"] for entry in record.get("metrics") or [] if entry.get("headline")), None)


def item_text(item: dict[str, Any], limit: int = 300) -> str:
    """A short human-readable description of an item for example tables."""
    for field in ("question", "text", "source", "sentence", "sentence1"):
        value = item.get(field)
        if isinstance(value, str) and value:
            text = value
            break
    else:
        text = ""
    choices = item.get("choices")
    if isinstance(choices, list) and choices:
        text += " | " + " / ".join(f"{LETTERS[i]}: {c}" for i, c in enumerate(choices[:10]))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_items(paths: Iterable[str | Path]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """Prepared items keyed by (task, language) then id: ``data/prepared/{task}/{language}.jsonl``."""
    out = {}
    for path in sorted(map(str, paths)):
        p = Path(path)
        out[(p.parent.name, p.stem)] = {str(r["id"]): r for r in read_jsonl(p)}
    return out


def write_csv(frame, path: str | Path) -> None:
    """A table as CSV, written atomically with a fixed float format so reruns give identical files."""
    with atomic_open(path) as handle:
        frame.to_csv(handle, index=False, float_format="%.6f", lineterminator="\n")


# Columns of the result tables that hold names or labels: model and template names are whatever params.yaml keys
# allow (`0.2`, `1e3`, `007`, `true`, `null`), so pandas must not read them as numbers, booleans or missing values.
NAME_COLUMNS = frozenset({
    "model", "task", "language", "template", "metric", "name", "pivot", "best_template", "worst_template",
    "template_a", "template_b", "comparison", "fixed", "a", "b", "ranked", "within", "id", "example_id",
    "models_correct", "models_wrong", "reason", "top_reason", "reasons", "bucket", "family", "variant",
    "best_variant", "worst_variant", "term", "axis",
})


def read_table(path: str | Path):
    """An analysis CSV read back with its name columns as text: a template named ``0.2`` or ``007`` stays so."""
    header = pd.read_csv(path, nrows=0).columns
    return pd.read_csv(path, dtype={c: str for c in header if c in NAME_COLUMNS}, keep_default_na=False,
                       na_values=[""])


def on_reader_scale(frame: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """``frame`` as a results CSV holds it: ``columns`` on the scale readers see, each row's metric's
    (``babeleval.score.metrics``), its unit named in a ``scale`` column after ``metric``: no column mixes a 0-1
    share with a 0-100 score."""
    out = frame.copy()
    defined = [get_metric(name) for name in out["metric"]]
    for column in columns:
        if column in out.columns:
            out[column] = [m.shown(v) for m, v in zip(defined, out[column].astype(float))]
    out.insert(out.columns.get_loc("metric") + 1, "scale", [m.unit for m in defined])
    return out


def off_reader_scale(frame: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """A table ``on_reader_scale`` wrote, back on the scale the package computes on, by its ``scale`` column."""
    if "scale" not in frame.columns:
        return frame
    divisor = (frame["scale"] == PERCENT_UNIT).map({True: 100.0, False: 1.0})
    frame = frame.copy()
    for column in columns:
        if column in frame.columns:
            frame[column] = frame[column].astype(float) / divisor
    return frame.drop(columns="scale")
