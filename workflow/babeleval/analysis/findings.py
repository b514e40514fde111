"""The report's summary sentences, each with its evidence: is the difference real, and is it parsing or answering?

Per task, on its headline metric (babeleval.score.metrics):

- the **largest template effect** (one model and language, two templates) and the **biggest model gap** (one
  template and language, two models), from the paired tests (exact McNemar or paired bootstrap, Holm-adjusted
  p-value): each sentence says whether the difference is significant, with the difference's interval adjusted the
  same way (``significance.holm_level_interval``); where they disagree, the sentence says so: a significant test
  whose interval holds 0 (Holm's later steps are less strict than the interval's level) keeps its verdict, a test
  that is not significant beside an interval that excludes 0 is undecided;
- the **most and least robust language**: the mean spread across templates over models, with how many of that
  language's template pairs differ significantly;
- for a difference that is there (its interval excludes 0 and the paired test is significant), the share that
  is **parsing** (parse-failure rates) and the share that is **answering** (accuracy over parsed items). A
  difference whose interval holds 0 is "no detectable difference", with its interval, and nothing is attributed.
  A log-likelihood template reads no text: it has no parse failures and its accuracy over parsed items is its
  accuracy.

What needs two templates or two models is summed up once for the grid (``not_measured``), not once per task.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..score.metrics import ACCURACY, PARSE_FAILURE_RATE, PARSED_ACCURACY, get_metric, headline_metric
from .comparable import headline_cells, rows_of
from .settings import DEFAULT_SETTINGS

Key = tuple[str, str, str, str]  # model, task, language, template


def _finite(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


class Board:
    """Leaderboard values by (model, task, language, template) and metric."""

    def __init__(self, leaderboard: pd.DataFrame):
        self.values: dict[tuple[Key, str], float] = {}
        for row in leaderboard.itertuples(index=False):
            self.values[((row.model, row.task, row.language, row.template), row.metric)] = float(row.value)

    def get(self, key: Key, metric: str) -> float | None:
        value = self.values.get((key, metric))
        return value if _finite(value) else None

    def parse_failure(self, key: Key) -> float:
        """0 where the template reports none (log-likelihood scoring reads no text)."""
        value = self.get(key, PARSE_FAILURE_RATE)
        return 0.0 if value is None else value

    def parsed_accuracy(self, key: Key) -> float | None:
        value = self.get(key, PARSED_ACCURACY)
        if value is None and self.get(key, PARSE_FAILURE_RATE) is None:
            return self.get(key, ACCURACY)  # nothing to parse: every answer counts
        return value


def pct(value: float) -> str:
    return f"{100.0 * value:.1f}%"


def significance_text(row: pd.Series, alpha: float) -> str:
    verdict = "significant" if bool(row["significant"]) else "not significant"
    return f"{verdict} under the paired test ({row['test']}, Holm-adjusted p = {float(row['p_holm']):.3g}, alpha {alpha})"


def undetectable_text(row: pd.Series, shown) -> str:
    """What a difference that was not found could not have been: the test's MDE at 80% power, where it has one."""
    if not _finite(row.get("mde")):
        return ""
    return f"; this design could not detect less than {shown(float(row['mde'])):.1f} points (MDE, 80% power)"


def parsing_text(board: Board, a: Key, b: Key, label_a: str, label_b: str, metric: str) -> str:
    """How much of a difference between ``a`` and ``b`` is parsing and how much is answering."""
    pf_a, pf_b = board.parse_failure(a), board.parse_failure(b)
    if pf_a == 0 and pf_b == 0:
        return "No parse failures on either side: the difference is in answering."
    text = f"Parse failures: {label_a} {pct(pf_a)}, {label_b} {pct(pf_b)}"
    if metric != ACCURACY:
        return text + "."
    acc_a, acc_b = board.parsed_accuracy(a), board.parsed_accuracy(b)
    if acc_a is None or acc_b is None:
        side = label_a if acc_a is None else label_b
        return text + f"; {side} has no parsed answer, so the difference is parsing."
    text += f"; over parsed items {label_a} {pct(acc_a)}, {label_b} {pct(acc_b)}"
    parsing, answering = abs(pf_a - pf_b), abs(acc_a - acc_b)
    if parsing > answering:
        return text + ": mostly a difference in parsing (format), not in answering."
    return text + ": mostly a difference in answering, not in parsing."


def _largest(sig: pd.DataFrame) -> pd.Series | None:
    if sig.empty:
        return None
    order = sig.assign(size=sig["diff"].astype(float).abs()).sort_values(
        ["size", "language", "fixed", "a", "b"], ascending=[False, True, True, True, True], kind="stable")
    return order.iloc[0]


def _sides(row: pd.Series, task: str, compared: str) -> tuple[str, Key, Key, str, str]:
    """Where the pair sits, the two leaderboard keys and how each side is named."""
    fixed, language, a, b = row["fixed"], row["language"], row["a"], row["b"]
    if compared == "template":  # keys are (model, task, language, template)
        return fixed, (fixed, task, language, a), (fixed, task, language, b), f"template {a}", b
    return f"template {fixed}", (a, task, language, fixed), (b, task, language, fixed), a, b


def _tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"


def holds_zero(row: pd.Series) -> bool:
    """The difference's interval at the Holm level holds 0 (or there is none: it shows no difference then either)."""
    low, high = row.get("adj_low"), row.get("adj_high")
    if not (_finite(low) and _finite(high)):
        return not bool(row["significant"])
    return float(low) <= 0 <= float(high)


def largest_difference(task: str, metric: str, board: Board, sig: pd.DataFrame, alpha: float, compared: str) -> str:
    """The largest paired difference between two templates (``compared="template"``, the model fixed) or two models
    (``compared="model"``, the template fixed): with its interval and significance; what parsing accounts for only
    where there is a difference to account for."""
    what = "template effect" if compared == "template" else "model gap"
    row = _largest(sig)
    if row is None:
        return f"{task}: no paired {compared} test could be run on {metric}."
    where, key_a, key_b, side_a, side_b = _sides(row, task, compared)
    shown = get_metric(metric).shown
    score_a, score_b = shown(float(row["score_a"])), shown(float(row["score_b"]))
    largest = "largest" if compared == "template" else "biggest"
    head = (f"{task}: {largest} {what} on {metric}: {where}, {row['language']}, {side_a} {score_a:.1f} vs {side_b} "
            f"{score_b:.1f}")
    # the interval is adjusted like the p-value beside it (both at the family's Holm level)
    interval = ""
    if _finite(row.get("adj_low")) and _finite(row.get("adj_high")):
        interval = (f"interval [{shown(float(row['adj_low'])):+.1f}, {shown(float(row['adj_high'])):+.1f}] points "
                    f"adjusted over {_tests(int(row['family_size']))}, ")
    evidence = f"{interval}{int(row['n_items'])} paired items"
    significant, zero = bool(row["significant"]), holds_zero(row)
    if not significant and zero:
        return (f"{head}: no detectable difference ({evidence}; {row['test']}, Holm-adjusted p = "
                f"{float(row['p_holm']):.3g}){undetectable_text(row, shown)}.")
    text = f"{head} ({score_a - score_b:+.1f} points; {evidence}), {significance_text(row, alpha)}"
    if not significant:  # a normal interval and a bootstrap p-value can part at the margin
        return text + f": undecided, its adjusted interval excludes 0{undetectable_text(row, shown)}."
    if zero:  # Holm's later steps are less strict than the interval's Bonferroni level
        text += ", though its interval, simultaneous at Bonferroni's stricter level, holds 0"
    return text + ". " + parsing_text(board, key_a, key_b, row["a"], row["b"], metric)


def robust_languages(task: str, metric: str, board: Board, task_board: pd.DataFrame, sig: pd.DataFrame) -> list[str]:
    """Most and least robust language: mean over models of the spread across templates."""
    frame = task_board[task_board["metric"] == metric].dropna(subset=["value"])
    shown = get_metric(metric).shown
    spreads: dict[str, list[float]] = {}
    pf_spreads: dict[str, list[float]] = {}
    for (model, language), group in frame.groupby(["model", "language"], sort=True):
        if group["template"].nunique() < 2:
            continue
        spreads.setdefault(language, []).append(shown(group["value"].max()) - shown(group["value"].min()))
        rates = [board.parse_failure((model, task, language, t)) for t in group["template"]]
        pf_spreads.setdefault(language, []).append(100.0 * (max(rates) - min(rates)))
    if len(spreads) < 2:
        return []
    mean = {lang: sum(v) / len(v) for lang, v in spreads.items()}
    ranked = sorted(mean, key=lambda lang: (mean[lang], lang))
    if round(mean[ranked[0]], 1) == round(mean[ranked[-1]], 1):
        return [f"{task}: every language moves alike with the template ({metric} by {mean[ranked[0]]:.1f} points "
                "on average over models): no language is more robust than another."]
    out = []
    for word, language in (("most", ranked[0]), ("least", ranked[-1])):
        tests = sig[sig["language"] == language]
        significant = int(tests["significant"].astype(bool).sum()) if not tests.empty else 0
        pf = sum(pf_spreads[language]) / len(pf_spreads[language])
        out.append(f"{task}: {word} robust language to the template: {language} (templates move {metric} by "
                   f"{mean[language]:.1f} points on average over models; {significant} of {len(tests)} template pairs "
                   f"differ significantly; parse-failure rates move by {pf:.1f} points).")
    return out


def headline(task: str, metric: str, board: Board, task_board: pd.DataFrame) -> list[str]:
    """Per model: the headline metric over all items and over parsed items, and the parse-failure rate, over the
    task's headline cells (the same for every model: ``babeleval.analysis.comparable``)."""
    out = []
    frame = task_board[task_board["metric"] == metric].dropna(subset=["value"])
    defined = get_metric(metric)
    cells = headline_cells(frame)
    for model, held in cells.items():
        group = rows_of(frame, held)
        keys = [(model, task, r.language, r.template) for r in group.itertuples(index=False)]
        value = sum(defined.shown(v) for v in group["value"]) / len(group)
        unit = "%" if defined.percent else ""
        text = f"{task}, {model}: {metric} {value:.1f}{unit} over all items (mean over {group['language'].nunique()} language(s) and " \
               f"{group['template'].nunique()} template(s){'' if held.comparable or len(cells) < 2 else ', not comparable with the other models'})"
        generated = [k for k in keys if board.get(k, PARSE_FAILURE_RATE) is not None]
        if generated:
            pf = sum(board.parse_failure(k) for k in generated) / len(generated)
            text += f"; on its {len(generated)} generated combination(s), parse failures {pct(pf)}"
            if metric == ACCURACY and any((k, PARSED_ACCURACY) in board.values for k in generated):
                parsed = [board.parsed_accuracy(k) for k in generated]
                parsed = [v for v in parsed if v is not None]
                text += (f" and accuracy over parsed items {pct(sum(parsed) / len(parsed))}" if parsed
                         else ", and no answer could be parsed")
        out.append(text + ".")
    return out


def per_task(leaderboard: pd.DataFrame, sig_templates: pd.DataFrame, sig_models: pd.DataFrame,
             alpha: float = DEFAULT_SETTINGS.alpha) -> dict[str, list[str]]:
    """task -> its summary sentences, in reading order."""
    board = Board(leaderboard)
    out: dict[str, list[str]] = {}
    for task in sorted(leaderboard["task"].unique()):
        task_board = leaderboard[leaderboard["task"] == task]
        metric = headline_metric(task_board["metric"].unique())
        if metric is None:
            continue

        def tests(frame: pd.DataFrame) -> pd.DataFrame:
            if frame.empty:
                return frame
            return frame[(frame["task"] == task) & (frame["metric"] == metric)]

        sentences = headline(task, metric, board, task_board)
        if task_board["template"].nunique() > 1:
            sentences.append(largest_difference(task, metric, board, tests(sig_templates), alpha, "template"))
            sentences += robust_languages(task, metric, board, task_board, tests(sig_templates))
        if task_board["model"].nunique() > 1:
            sentences.append(largest_difference(task, metric, board, tests(sig_models), alpha, "model"))
        out[task] = sentences
    return out


def not_measured(leaderboard: pd.DataFrame) -> list[str]:
    """One line each for the grid: the tasks with one template (no template effect) and, with one model, that
    no model gap can be measured."""
    out = []
    templates = leaderboard.groupby("task")["template"].nunique()
    single = sorted(templates[templates < 2].index)
    if single:
        out.append(f"Template effects need two templates of a task: {len(single)} of {len(templates)} task(s) have one "
                   f"({', '.join(single)}).")
    models = sorted(leaderboard["model"].unique())
    if len(models) < 2:
        out.append(f"Model gaps need two models: this grid has one ({', '.join(models)}).")
    return out
