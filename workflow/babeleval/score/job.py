"""Parse and score one (model, task, language, template): generations in, per-item records and metrics out.

CPU only. How a record is read and judged depends on the task's family
(``babeleval.score.scorers``); which metrics are reported on the template (its
``metrics:``, else the family's defaults). Metrics are computed over all the
records of the combination, so corpus metrics (BLEU, chrF, macro-F1,
balanced accuracy) are corpus metrics. A response a parser cannot read is a
parse failure: it is not correct, and it is counted and reported as its own
metric so that a format problem is never mistaken for a knowledge problem.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ..core.errors import DataError
from ..core.jsonl import read_jsonl, write_json, write_jsonl
from ..core.progress import Progress
from ..core.record_fields import PROMPT_TEXT
from ..prompts.record import PromptRecord
from ..prompts.render import evaluated_items
from ..prompts.templates import FewShot, Template, load_template
from ..tasks.families import get_family
from . import extraction, outcomes, scorers
from .metrics import compute_all


def score_combination(records: list[dict[str, Any]], template: Template, family: str,
                      metric_options: Mapping[str, Any], metric_names: tuple[str, ...] | None,
                      on_scored: Callable[[int], None] | None = None,
                      extracted: dict[Any, dict[str, Any]] | None = None
                      ) -> tuple[list[dict], dict[str, float], dict[str, str]]:
    """Per-item raw records (the generation plus what scoring made of it), the metrics and their signatures.

    ``family``, ``metric_options`` and ``metric_names`` as the combination's resolved record holds them
    (``babeleval.grid.records``; ``metric_names`` None: the family's defaults for the template's mode).
    ``on_scored``: called with the number of records scored so far after each one (a progress line for a large
    task). ``extracted``: the extractor's records by item id, where the template names an extractor
    (``babeleval.score.extraction``).
    """
    scored = []
    for record in records:
        scored.append(scored_record(record, template, family, (extracted or {}).get(record.get("id"))))
        if on_scored is not None:
            on_scored(len(scored))
    names = get_family(family).reported_metrics(
        template.mode, tuple(metric_names) if metric_names is not None else None)
    metrics, signatures = compute_all(names, scored, **metric_options)
    return scored, metrics, signatures


def scored_record(record: dict[str, Any], template: Template, family: str,
                  extracted: dict[str, Any] | None = None) -> dict[str, Any]:
    """A raw record: the generation record and what scoring made of it, less the prompt's text.

    The text stays in the generations file, under the same id (the scores file's provenance holds that file's
    sha256). Written again per combination it was most of every raw file (about 31 of a five-shot Belebele
    record's 33 KB) and of the scoring jobs' writing.
    """
    kept = {key: value for key, value in record.items() if key not in PROMPT_TEXT}
    return {**kept, **scorers.score_record(family, record, template, extracted)}


def check_records(records: list[dict[str, Any]], where: str, template: Template, family: str) -> None:
    """Our own generations file, damaged (edited by hand, a disk error): stop with the record, not a KeyError."""
    needed = ["answer"]
    needed += ["loglikelihoods", "continuations"] if template.mode == "loglikelihood" else ["response"]
    if get_family(family).choices:
        needed.append("choices")
    for number, record in enumerate(records, start=1):
        missing = [key for key in needed if key not in record]
        if missing:
            raise DataError(f"{where}: record {number}: missing {', '.join(missing)} (a damaged generations "
                            "file: delete it to have it generated again)")


def fewshot_shown(fewshot: FewShot, records: list[dict[str, Any]]) -> dict[str, int]:
    """Exemplars asked for (the combination's few-shot plan) and shown: fewer only where the plan allows it
    (``fewshot.allow_fewer``)."""
    shown = [len(r.get("exemplar_ids") or ()) for r in records]
    n = fewshot.n
    return {"asked": n, "fewest_shown": min(shown, default=n), "items_shown_fewer": sum(k < n for k in shown)}


def extractor_summary(name: str, scored: list[dict[str, Any]], extracted: dict[Any, dict[str, Any]]
                      ) -> dict[str, Any]:
    """What the extractor did for a combination: asked, answers it gave that count, where both read one and agreed."""
    both = [r for r in scored if r.get(extraction.RULE_ANSWER) is not None and r.get(extraction.EXTRACTOR_ANSWER) is not None]
    first = next(iter(extracted.values()), {})
    return {"model": name, "model_fingerprint_sha256": first.get("model_fingerprint_sha256"),
            "asked": sum(bool(r.get(extraction.EXTRACTOR_ASKED)) for r in scored),
            "answers_from_extractor": sum(r.get(extraction.ANSWER_SOURCE) == extraction.EXTRACTOR for r in scored),
            "both_read": len(both),
            "agree": sum(r[extraction.RULE_ANSWER] == r[extraction.EXTRACTOR_ANSWER] for r in both)}


def budget_fields(prompts: Mapping[str, Any]) -> dict[str, Any]:
    """For a variant of a budgeted set (its resolved record's prompts carry the plan): ``budgeted``, ``n_full``
    (the items the variant would answer in full: the prepared items up to the limit) and the plan as the record
    holds it, so that no reader takes its metrics, on a subset of the items, for the variant's score; nothing for
    any other."""
    if not prompts.get("budget"):
        return {}
    record = PromptRecord.from_json(prompts)
    items = evaluated_items(read_jsonl(record.data), record.shuffle_seed, record.limit)
    return {"budgeted": True, "n_full": len(items), "budget": prompts["budget"]}


def score_files(*, generations: str, record: Mapping[str, Any], raw_out: str, scores_out: str,
                labels: dict[str, str], provenance: dict[str, Any] | None = None, outcomes_out: str | None = None,
                extractions: str | None = None) -> dict[str, Any]:
    """Score one generations file: write the per-item raw records, the scores summary and, with ``outcomes_out``,
    the outcome table analysis reads (``babeleval.score.outcomes``). ``extractions``: the extractor's file for
    these replies, where the template names one (``babeleval.score.extraction``).

    ``record``: the combination's resolved record as the job's params hold it
    (``babeleval.grid.records.CombinationRecord.as_json``): its template, family, metrics and what they need, and
    its few-shot plan. ``provenance`` (``babeleval.score.provenance.for_scores``) is written into the scores file.
    """
    prompts = PromptRecord.from_json(record["prompts"])
    template = load_template(prompts.task, prompts.template)
    family = record["family"]
    names = tuple(metric["name"] for metric in record["metrics"])
    records = read_jsonl(generations)
    check_records(records, generations, template, family)
    # a large task (thousands of items, sentence-level chrF) takes a while: say how far it got
    progress = Progress(len(records), what="scored", unit="items")
    extracted = extraction.by_id(extractions)
    scored, metrics, signatures = score_combination(records, template, family, record["metric_options"], names,
                                                    progress.tick, extracted)
    write_jsonl(raw_out, scored)
    if outcomes_out is not None:
        outcomes.write(outcomes_out, scored)
    first = records[0] if records else {}
    summary = {
        **labels,
        "n": len(scored),
        **budget_fields(record["prompts"]),  # a budgeted variant's scores are of a subset of the items: said here
        "metrics": metrics,
        "parse_failures": sum(not r["parsed"] for r in scored),
        # prompts cut from the left to fit the model's context, and of those the ones cut into the question
        # (those items failed: families.question_cut)
        "truncated_prompts": sum(bool(r.get("truncated_tokens")) for r in scored),
        "questions_cut": sum(bool(r.get("question_cut")) for r in scored),
        "template_sha256": template.sha256,
        "mode": template.mode,
        "parser": template.parser,
        "family": family,
        "settings": first.get("settings"),
        "model_fingerprint": first.get("model_fingerprint"),
        **({"provenance": provenance} if provenance is not None else {}),  # babeleval.score.provenance.for_scores
    }
    if prompts.fewshot.n:
        summary["fewshot"] = fewshot_shown(prompts.fewshot, scored)
    if template.extractor is not None:
        summary["extractor"] = extractor_summary(template.extractor, scored, extracted or {})
    if signatures:
        summary["signatures"] = signatures
    write_json(scores_out, summary)
    return summary
