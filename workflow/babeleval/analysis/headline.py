"""What a headline number needs beside it, computed from a combination's outcome table (``babeleval.score.outcomes``).

- ``acc_parsed``: accuracy over the items whose answer could be read. With
  ``acc`` (over all items, a parse failure counting as wrong) and
  ``parse_failure_rate`` it separates *can the model answer* from *does it
  answer in the format the parser reads*.
- the **chance level** of a metric that has one (its ``chance``, ``babeleval.score.metrics``): the mean
  over items of 1 / (number of choices), for tasks whose items have choices; none otherwise
  (translation, extractive QA and math have no chance level).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from ..core.paths import combo_from_path
from ..core.progress import Progress
from ..score import outcomes
from ..score.metrics import ACCURACY, PARSED_ACCURACY, get_metric
from .bootstrap import interval_for
from .settings import DEFAULT_SETTINGS


def chance_level(records: Sequence[dict[str, Any]]) -> float | None:
    """Mean of 1 / (number of choices) over the outcome rows; None when the items have no choices."""
    counts = [r[outcomes.N_CHOICES] for r in records if r.get(outcomes.N_CHOICES)]
    if not counts or len(counts) != len(records):
        return None
    return sum(1.0 / k for k in counts) / len(counts)


def is_generated(records: Sequence[dict[str, Any]]) -> bool:
    """A generated response (read by a parser), as opposed to log-likelihood scoring (nothing to parse)."""
    return any("response" in r for r in records)


def parsed_accuracy_row(combo: tuple[str, str, str, str], records: Sequence[dict[str, Any]], *, seed: int,
                        n_samples: int = DEFAULT_SETTINGS.samples, confidence: float = DEFAULT_SETTINGS.confidence
                        ) -> dict[str, Any] | None:
    """The ``acc_parsed`` leaderboard row of a generated combination scored per item; None otherwise."""
    if not is_generated(records) or not all(isinstance(r.get("correct"), bool) for r in records):
        return None
    parsed = [r for r in records if r.get("parsed", True)]
    model, task, language, template = combo
    row = {"model": model, "task": task, "language": language, "template": template, "metric": PARSED_ACCURACY,
           "value": float("nan"), "n": len(parsed), "ci_low": float("nan"), "ci_high": float("nan")}
    if parsed:
        row["value"] = get_metric(PARSED_ACCURACY).compute(records)
        row["ci_low"], row["ci_high"] = interval_for(PARSED_ACCURACY, records, seed=seed, n_samples=n_samples,
                                                     confidence=confidence)
    return row


def truncated_prompts(summary: dict[str, Any]) -> int | None:
    """Prompts cut to fit the model's context, where the scores file records it."""
    value = summary.get("truncated_prompts")
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def fewer_items_because(summary: dict[str, Any]) -> str | None:
    """What its prompt record says leaves items of the language out of a combination's scores: few-shot exemplars
    that are the first evaluation items (the ``first`` sampler on an evaluation part, as the Belebele tutorial blog
    does: items with an exemplar's id are not scored), or a ``limit``; None where it says neither (or the scores
    file predates the record)."""
    prompts = ((summary.get("provenance") or {}).get("spec") or {}).get("prompts") or {}
    fewshot = prompts.get("fewshot") or {}
    reasons = []
    if fewshot.get("n") and fewshot.get("sampler") == "first" and prompts.get("exemplar_part") == "eval":
        reasons.append(f"its {fewshot['n']} few-shot exemplars are the first evaluation items, left out of what it "
                       "scores")
    if prompts.get("limit"):
        reasons.append(f"limit {prompts['limit']} items")
    return "; ".join(reasons) or None


def add_headline_columns(frame: pd.DataFrame, outcome_files: Sequence[str | Path], score_files: Sequence[str | Path],
                         *, seed: int, n_samples: int = DEFAULT_SETTINGS.samples,
                         confidence: float = DEFAULT_SETTINGS.confidence) -> pd.DataFrame:
    """The leaderboard with ``acc_parsed`` rows, a ``chance`` column, a ``truncated_prompts`` column and a
    ``fewer_items_because`` column (``fewer_items_because``).

    Outcome tables are read one at a time, as for the intervals.
    """
    present = set(zip(frame["model"], frame["task"], frame["language"], frame["template"]))
    chance: dict[tuple, float | None] = {}
    extra_rows = []
    files = sorted(map(str, outcome_files))
    progress = Progress(len(files), what="bootstrapped parsed-item accuracy of", unit="combinations")
    for done, path in enumerate(files, 1):
        combo = tuple(combo_from_path(path))
        if combo in present:
            records = outcomes.read(path, without=("language",))
            chance[combo] = chance_level(records)
            row = parsed_accuracy_row(combo, records, seed=seed, n_samples=n_samples, confidence=confidence)
            if row is not None and ACCURACY in set(frame.loc[(frame["model"] == combo[0]) & (frame["task"] == combo[1])
                                                          & (frame["language"] == combo[2])
                                                          & (frame["template"] == combo[3]), "metric"]):
                extra_rows.append(row)
        progress.tick(done)
    truncated, fewer = {}, {}
    for path in score_files:
        summary = json.loads(Path(path).read_text(encoding="utf-8"))
        key = (summary["model"], summary["task"], summary["language"], summary["template"])
        truncated[key] = truncated_prompts(summary)
        fewer[key] = fewer_items_because(summary)
    out = pd.concat([frame, pd.DataFrame(extra_rows, columns=frame.columns)], ignore_index=True) \
        if extra_rows else frame.copy()
    keys = list(zip(out["model"], out["task"], out["language"], out["template"]))
    out["chance"] = [chance.get(k) if get_metric(m).chance else None for k, m in zip(keys, out["metric"])]
    out["chance"] = out["chance"].astype(float)
    out["truncated_prompts"] = pd.array([truncated.get(k) for k in keys], dtype="Int64")
    out["fewer_items_because"] = [fewer.get(k) for k in keys]
    return out.sort_values(["model", "task", "language", "template", "metric"], kind="stable").reset_index(drop=True)
