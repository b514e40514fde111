"""Parse and score one (model, task, language, template): generations in, per-item records and metrics out.

CPU only. A response a parser cannot read is a parse failure: it is not
correct, and it is counted and reported as its own metric so that a format
problem is never mistaken for a knowledge problem.
"""

from __future__ import annotations

from typing import Any

from .jsonl import read_jsonl, write_json, write_jsonl
from .metrics import accuracy, argmax, length_normalised
from .parsers import LETTERS, get_parser
from .templates import load_template


def score_loglikelihood(record: dict[str, Any]) -> dict[str, Any]:
    logprobs = record["loglikelihoods"]
    pred = argmax(logprobs)
    pred_norm = argmax(length_normalised(logprobs, record["continuations"]))
    return {"prediction": pred, "prediction_norm": pred_norm, "parsed": True, "parse_error": None,
            "correct": pred == record["answer"], "correct_norm": pred_norm == record["answer"]}


def score_generation(record: dict[str, Any], parser_name: str) -> dict[str, Any]:
    n_choices = len(record["choices"])
    parsed = get_parser(parser_name)(record["response"], n_choices)
    prediction = LETTERS.index(parsed.answer) if parsed.ok else None
    return {"prediction": prediction, "parsed_answer": parsed.answer, "parsed": parsed.ok,
            "parse_error": parsed.error, "correct": prediction == record["answer"]}


def score_records(records: list[dict[str, Any]], mode: str, parser_name: str | None) -> tuple[list[dict], dict[str, float]]:
    """Per-item raw records (the generation plus what scoring made of it) and the metrics of the combination."""
    scored = []
    for record in records:
        outcome = score_loglikelihood(record) if mode == "loglikelihood" else score_generation(record, parser_name)
        scored.append({**record, **outcome, "gold": LETTERS[record["answer"]]})
    metrics = {"acc": accuracy([r["correct"] for r in scored])}
    if mode == "loglikelihood":
        metrics["acc_norm"] = accuracy([r["correct_norm"] for r in scored])
    else:
        failures = sum(not r["parsed"] for r in scored)
        metrics["parse_failure_rate"] = failures / len(scored) if scored else float("nan")
    return scored, metrics


def score_files(*, generations: str, template_task: str, template_name: str, raw_out: str, scores_out: str,
                labels: dict[str, str], provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """Score one generations file: write the per-item raw records and the scores summary."""
    template = load_template(template_task, template_name)
    records = read_jsonl(generations)
    scored, metrics = score_records(records, template.mode, template.parser)
    write_jsonl(raw_out, scored)
    first = records[0] if records else {}
    summary = {
        **labels,
        "n": len(scored),
        "metrics": metrics,
        "parse_failures": sum(not r["parsed"] for r in scored),
        "template_sha256": template.sha256,
        "mode": template.mode,
        "parser": template.parser,
        "settings": first.get("settings"),
        "model_fingerprint": first.get("model_fingerprint"),
        **({"provenance": provenance} if provenance is not None else {}),  # babeleval.provenance.for_scores
    }
    write_json(scores_out, summary)
    return summary
