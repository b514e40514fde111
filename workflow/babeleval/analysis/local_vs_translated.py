"""Translated against locally written tests: per model and language, the gap between a pair of tasks.

A grid pairs a translated task with a locally written one for the same languages (``analysis.local_vs_translated``:
``belebele: global_piqa``, ``global_mmlu: include``). For every model, language and pair of templates both tasks
ran, this gives:

- the accuracy on each (the share of items answered right: ``correct`` of the outcome tables, an unparsed answer
  counting as not right, as ``acc`` does) and the gap, local minus translated, with a percentile bootstrap
  interval: the two tasks' items are different sets, so each is resampled on its own, with the grid's seed;
- the models' ranks on each task in that language (1 the best; ties share the mean rank) and the change;
- a note where the two differ in chance level (the mean of 1 / number of choices over the items) or in format
  (scoring mode, number of exemplars): a gap then mixes what the items test with how they are asked.

The gap of the items' text (translated or written in the language) is confounded with everything else the two
datasets differ in (domain, difficulty, length); the table says what it can: the format and chance it sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..core.paths import Combo
from .settings import AnalysisSettings

COLUMNS = ["translated", "local", "model", "language", "translated_template", "local_template", "n_translated",
           "n_local", "acc_translated", "acc_local", "gap", "gap_low", "gap_high", "chance_translated", "chance_local",
           "rank_translated", "rank_local", "rank_change", "note"]


@dataclass(frozen=True)
class Format:
    """How a task's template asks its items: what the note compares."""

    mode: str  # loglikelihood or generate
    shots: int  # exemplars before each item

    def describe(self) -> str:
        return f"{self.mode}, {self.shots}-shot"


def correctness(outcomes: pd.DataFrame) -> np.ndarray:
    """1 where an item was answered right, else 0 (an unparsed answer, null, is not right)."""
    return outcomes["correct"].fillna(False).astype(bool).to_numpy(dtype=float)


def chance(outcomes: pd.DataFrame) -> float:
    """The accuracy of guessing: the mean of 1 / number of choices over the items (NaN where items have none)."""
    if "n_choices" not in outcomes or outcomes["n_choices"].isna().all():
        return float("nan")
    return float((1.0 / outcomes["n_choices"].astype(float)).mean())


def gap_interval(translated: np.ndarray, local: np.ndarray, settings: AnalysisSettings) -> tuple[float, float]:
    """A percentile bootstrap interval of mean(local) - mean(translated), each side's items resampled on its own."""
    rng = np.random.default_rng(settings.seed)
    draws = (rng.choice(local, size=(settings.samples, local.size)).mean(axis=1)
             - rng.choice(translated, size=(settings.samples, translated.size)).mean(axis=1))
    tail = (1.0 - settings.confidence) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return float(low), float(high)


def note(chance_t: float, chance_l: float, format_t: Format, format_l: Format) -> str:
    parts = []
    if chance_t == chance_t and chance_l == chance_l and abs(chance_t - chance_l) > 1e-9:
        parts.append(f"chance differs: {100 * chance_t:.1f}% translated, {100 * chance_l:.1f}% local")
    if format_t != format_l:
        parts.append(f"format differs: {format_t.describe()} translated, {format_l.describe()} local")
    return "; ".join(parts)


def compare(pairs: Mapping[str, str], outcomes: Mapping[Combo, pd.DataFrame], formats: Mapping[tuple[str, str], Format],
            settings: AnalysisSettings) -> pd.DataFrame:
    """The table of every (pair, model, language, template pair) both tasks of a pair have outcomes for.

    ``outcomes``: the outcome table of each combination; ``formats``: (task, template) -> its format."""
    rows = []
    for translated, local in pairs.items():
        for t_combo, t_items in outcomes.items():
            if t_combo.task != translated:
                continue
            for l_combo, l_items in outcomes.items():
                if (l_combo.task, l_combo.model, l_combo.language) != (local, t_combo.model, t_combo.language):
                    continue
                t_correct, l_correct = correctness(t_items), correctness(l_items)
                low, high = gap_interval(t_correct, l_correct, settings)
                chance_t, chance_l = chance(t_items), chance(l_items)
                rows.append({
                    "translated": translated, "local": local, "model": t_combo.model, "language": t_combo.language,
                    "translated_template": t_combo.template, "local_template": l_combo.template,
                    "n_translated": t_correct.size, "n_local": l_correct.size,
                    "acc_translated": t_correct.mean(), "acc_local": l_correct.mean(),
                    "gap": l_correct.mean() - t_correct.mean(), "gap_low": low, "gap_high": high,
                    "chance_translated": chance_t, "chance_local": chance_l,
                    "note": note(chance_t, chance_l, formats[(translated, t_combo.template)],
                                 formats[(local, l_combo.template)]),
                })
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if not c.startswith("rank")])
    return with_ranks(table)


def with_ranks(table: pd.DataFrame) -> pd.DataFrame:
    """The models' ranks on each task of a pair, per language and template pair (1 the best, ties the mean rank),
    and the change (positive: the model ranks higher on the locally written task)."""
    table = table.copy()
    keys = ["translated", "local", "language", "translated_template", "local_template"]
    for side in ("translated", "local"):
        table[f"rank_{side}"] = (table.groupby(keys)[f"acc_{side}"].rank(ascending=False, method="average")
                                 if not table.empty else pd.Series(dtype=float))
    table["rank_change"] = table["rank_translated"] - table["rank_local"]
    return table[COLUMNS].sort_values(["translated", "language", "model"], kind="stable").reset_index(drop=True)


def findings(table: pd.DataFrame) -> list[str]:
    """Lines for the report: the largest gaps that exclude zero, and the rank changes."""
    out = []
    for row in table.itertuples(index=False):
        if row.gap_low > 0 or row.gap_high < 0:
            out.append(f"{row.model}, {row.language}: {row.local} is {100 * abs(row.gap):.1f} points "
                       f"{'above' if row.gap > 0 else 'below'} {row.translated} "
                       f"[{100 * row.gap_low:.1f}, {100 * row.gap_high:.1f}]" + (f" ({row.note})" if row.note else ""))
    moved = table[(table["rank_change"] != 0) & table["rank_change"].notna()]
    for row in moved.itertuples(index=False):
        out.append(f"{row.model}, {row.language}: rank {row.rank_translated:g} on {row.translated}, "
                   f"{row.rank_local:g} on {row.local}")
    return out


def empty_reason(pairs: Mapping[str, str], models: Sequence[str]) -> str:
    if not pairs:
        return "No pair of tasks: analysis.local_vs_translated names none."
    return ("No rows: no model ran both tasks of a pair in a language." if models else "No models.")


def section(table: pd.DataFrame, csv_name: str, reason: str) -> str:
    """The report's section (``<section id="local-vs-translated">``), included as the variation section is."""
    import html

    from .report import table_html

    items = "".join(f"<li>{html.escape(line)}</li>" for line in findings(table))
    shown = table.copy()
    for column in ("acc_translated", "acc_local", "gap", "gap_low", "gap_high", "chance_translated", "chance_local"):
        shown[column] = 100.0 * shown[column]
    return "\n".join([
        '<section id="local-vs-translated">', "<h2>Translated and locally written tests</h2>",
        '<p class="note">Per model and language: accuracy (%) on a translated task and on a task written in the '
        "language, the gap (local minus translated, points) with a percentile bootstrap interval (each task's items "
        "resampled on their own), and the models' ranks on each (1 the best). The two datasets differ in more than "
        "translation (domain, difficulty); the note says where chance levels or formats differ as well.</p>",
        f'<ul class="findings">{items}</ul>' if items else "",
        str(table_html(shown, "local-vs-translated", csv_name, empty=reason)),
        "</section>"])
