"""Hand-made raw, outcome and scores files for the analysis tests: three models, two languages, two templates.

Belebele-shaped items q01..q10, parallel across languages (same id in each).
Who got what right is written out below so every expected count in the tests
can be checked by eye.
"""

from __future__ import annotations

import json
from pathlib import Path

MODELS = ["m1", "m2", "m3"]
LANGUAGES = ["eng_Latn", "fra_Latn"]
TEMPLATES = ["paper", "instruct"]
IDS = [f"q{i:02d}" for i in range(1, 11)]

# (model, language, template) -> one character per item: 1 right, 0 wrong, x parse failure (wrong)
OUTCOMES = {
    ("m1", "eng_Latn", "paper"):    "1110000000",
    ("m2", "eng_Latn", "paper"):    "1111100000",
    ("m3", "eng_Latn", "paper"):    "1111111100",
    ("m1", "fra_Latn", "paper"):    "1100000000",
    ("m2", "fra_Latn", "paper"):    "1111000000",
    ("m3", "fra_Latn", "paper"):    "1111110000",
    ("m1", "eng_Latn", "instruct"): "1xx0000000",
    ("m2", "eng_Latn", "instruct"): "111x100000",
    ("m3", "eng_Latn", "instruct"): "1111111111",
    ("m1", "fra_Latn", "instruct"): "10xxxxxxxx",
    ("m2", "fra_Latn", "instruct"): "1111000000",
    ("m3", "fra_Latn", "instruct"): "1111111110",
}
REASONS = ["no choice letter (A, B, C, D) at the start of the answer", "empty response"]


def records(model: str, language: str, template: str, outcomes: dict[tuple, str] = OUTCOMES) -> list[dict]:
    out = []
    flags = outcomes[(model, language, template)]
    for k, (item_id, flag) in enumerate(zip(IDS, flags)):
        failed = flag == "x"
        # parse failures: the first two failures of a file are "no letter", later ones "empty response"
        reason = None
        if failed:
            earlier = flags[:k].count("x")
            reason = REASONS[0] if earlier < 2 else REASONS[1]
        record = {"id": item_id, "language": language, "prompt": f"P: passage {item_id}\nQ: ...\nAnswer:",
                  "answer": 0, "gold": "A", "choices": ["w", "x", "y", "z"], "parsed": not failed,
                  "parse_error": reason, "prediction": None if failed else (0 if flag == "1" else 1),
                  "correct": flag == "1"}
        if template == "paper":
            record["loglikelihoods"] = [-1.0, -2.0, -3.0, -4.0] if flag == "1" else [-2.0, -1.0, -3.0, -4.0]
            record["correct_norm"] = flag == "1"
        else:
            record["response"] = "" if reason == REASONS[1] else ("zzz" if failed else ("A" if flag == "1" else "B"))
        out.append(record)
    return out


def metrics(recs: list[dict], template: str) -> dict[str, float]:
    acc = sum(r["correct"] for r in recs) / len(recs)
    if template == "paper":
        return {"acc": acc, "acc_norm": sum(r["correct_norm"] for r in recs) / len(recs)}
    return {"acc": acc, "parse_failure_rate": sum(not r["parsed"] for r in recs) / len(recs)}


def outcomes_from_raw(raw: Path) -> Path:
    """The outcome table of a raw file (results/raw/... -> results/outcomes/....parquet), as scoring writes it."""
    from babeleval.core.jsonl import read_jsonl
    from babeleval.score import outcomes as outcome_tables

    parts = list(raw.parts)
    parts[len(parts) - 1 - parts[::-1].index("raw")] = "outcomes"
    table = Path(*parts).with_suffix(".parquet")
    outcome_tables.write(table, read_jsonl(raw))
    return table


def write_results(root: Path, models: list[str] = MODELS,
                  outcomes: dict[tuple, str] = OUTCOMES) -> tuple[list[Path], list[Path]]:
    """Write results/raw, results/outcomes and results/scores under ``root``; return (outcome tables, score files):
    what analysis reads.

    ``outcomes``: (model, language, template) -> one character per item, as in OUTCOMES.
    """
    raws, scores = [], []
    for model, language, template in outcomes:
        if model not in models:
            continue
        recs = records(model, language, template, outcomes)
        raw = root / "results/raw" / model / "belebele" / language / f"{template}.jsonl"
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        score = root / "results/scores" / model / "belebele" / language / f"{template}.json"
        score.parent.mkdir(parents=True, exist_ok=True)
        summary = {"model": model, "task": "belebele", "language": language, "template": template,
                   "n": len(recs), "metrics": metrics(recs, template),
                   "parse_failures": sum(not r["parsed"] for r in recs)}
        score.write_text(json.dumps(summary), encoding="utf-8")
        raws.append(outcomes_from_raw(raw))
        scores.append(score)
    return raws, scores


def write_items(root: Path) -> list[Path]:
    """Prepared items (data/prepared/belebele/<language>.jsonl) for the example texts."""
    paths = []
    for language in LANGUAGES:
        path = root / "data/prepared/belebele" / f"{language}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = [{"id": i, "language": language, "passage": f"Passage {i}.", "question": f"Question {i} ({language})?",
                 "choices": ["w", "x", "y", "z"], "answer": 0} for i in IDS]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        paths.append(path)
    return paths


# A translation task: per-item prediction (the hypothesis) and gold (the reference), correct left null
# (corpus-level metrics).
HYPOTHESES_A = ["the cat sat on the mat", "a quick brown fox jumps", "it is raining today in paris",
                "we will meet at noon", "the market closes at twelve", "bees make honey from nectar",
                "the train left late yesterday", "she reads a book every night"]
HYPOTHESES_B = ["cat on mat", "the quick brown fox jumped over", "today it rains in paris",
                "we meet at noon tomorrow", "market shuts at noon", "honey is made by bees from nectar",
                "yesterday the train departed late", "every night she reads books"]
REFERENCES = ["the cat sat on the mat", "the quick brown fox jumps", "it is raining in paris today",
              "we will meet at noon", "the market closes at noon", "bees make honey from nectar",
              "the train left late yesterday", "she reads a book every evening"]


def translation_records(hypotheses: list[str]) -> list[dict]:
    return [{"id": f"s{i}", "language": "fra_Latn", "prediction": h, "gold": r, "correct": None,
             "parsed": True, "parse_error": None} for i, (h, r) in enumerate(zip(hypotheses, REFERENCES))]


def report_tables(raws: list[Path], scores: list[Path], n_samples: int = 50) -> dict:
    """Every table of the report, computed in-process from outcome tables and scores files (as the analysis rules
    do)."""
    from babeleval.analysis import leaderboard as aggregate
    from babeleval.analysis import headline, item_difficulty, parse_failures, significance, template_sensitivity
    from babeleval.analysis.records import load_outcomes, load_scores

    raw = load_outcomes(raws)
    board = headline.add_headline_columns(aggregate.leaderboard(list(load_scores(scores).values())), raws, scores,
                                          seed=0, n_samples=n_samples)
    tables = {"leaderboard": board, "sensitivity": template_sensitivity.template_sensitivity(board),
              "rank_stability": template_sensitivity.rank_stability(board)}
    sig = significance.pairwise(raw, load_scores(scores), seed=0, n_samples=2 * n_samples)
    tables.update(significance_templates=sig["templates"], significance_models=sig["models"])
    pf = parse_failures.tables(raw)
    tables.update(parse_failures=pf["rates"], parse_failure_reasons=pf["reasons"])
    diff = item_difficulty.difficulty(raw)
    gaps = item_difficulty.crosslingual(raw)
    tables.update(difficulty_buckets=diff["buckets"], difficulty_patterns=diff["patterns"],
                  crosslingual_gaps=gaps["gaps"], crosslingual_items=gaps["items"])
    return tables
