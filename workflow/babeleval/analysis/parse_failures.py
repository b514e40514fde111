"""Parse failures as their own tables: how often, why, and what such a response looks like.

A parse failure is a response the template's parser could not read (``parsed``
false, ``parse_error`` the parser's reason). It is scored as not correct, so a
format problem shows up here rather than hiding inside a low accuracy.

Reasons are counted by their name (``ambiguous``, ``no answer``, ``question cut``:
the text before the first colon, ``babeleval.score.parsers.REASONS``), not by their
full text, whose detail differs from item to item ("ambiguous: A or B",
"ambiguous: B or D"); each reason keeps one example with its full text. The rate is on the parse-failure rate's
scale (percent, ``babeleval.score.metrics``), as in the leaderboard: ``rate_pct``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

import pandas as pd

from ..score.metrics import PARSE_FAILURE_RATE, get_metric
from ..score.parsers import reason_of
from ..core.paths import Combo

RATE_COLUMNS = ["model", "task", "language", "template", "generated", "n", "parse_failures", "rate_pct", "reasons",
                "top_reason"]
REASON_COLUMNS = ["model", "task", "language", "template", "rank", "reason", "count", "share_of_failures",
                  "example_id", "example_error", "example_response"]
# Per combination, what its replies' structure shows (babeleval.score.parsers.structure.facts): how long the
# reasoning is, how often a reply was cut while reasoning, and how often the answer section was not in the script
# of the language asked (of the answers long enough to tell; a choice letter alone is not).
REASONING_COLUMNS = ["model", "task", "language", "template", "n", "with_reasoning", "reasoning_chars_mean",
                     "reasoning_chars_median", "cut_while_reasoning_pct", "answers_with_script",
                     "answer_off_script_pct"]
# Per combination whose template names an extractor model (babeleval.score.extraction): what it was asked, where
# both it and the rule parser read an answer and how often they agree, and the failures its answers resolved.
EXTRACTOR_COLUMNS = ["model", "task", "language", "template", "extractor", "n", "asked", "both_read", "agree",
                     "agreement_pct", "rule_failures", "from_extractor", "extractor_no_answer"]
EXAMPLE_CHARS = 200
UNKNOWN = "(no reason given)"


def reason_name(record: dict[str, Any]) -> str:
    """The failure's name: its reason's text before the detail."""
    error = record.get("parse_error")
    if not isinstance(error, str) or not error.strip():
        return UNKNOWN
    return reason_of(error).strip()


def _response(record: dict[str, Any]) -> str:
    text = record.get("response")
    if not isinstance(text, str):
        return ""
    return text if len(text) <= EXAMPLE_CHARS else text[:EXAMPLE_CHARS] + "..."


def tables(raw: Mapping[Combo, list[dict[str, Any]]], top: int = 5) -> dict[str, pd.DataFrame]:
    """``rates``: one row per combination; ``reasons``: its ``top`` most common reasons, an example each.

    ``generated`` tells a generated response (which a parser reads) from log-likelihood scoring (nothing to parse).
    """
    rate_rows, reason_rows = [], []
    for combo in sorted(raw):
        records = raw[combo]  # one combination at a time: ``raw`` may read it only now
        failed = [r for r in records if not r.get("parsed", True)]
        counts = Counter(reason_name(r) for r in failed)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        # log-likelihood scoring reads no text: nothing can fail to parse there
        generated = any("response" in r for r in records)
        rate_rows.append({**combo._asdict(), "generated": generated, "n": len(records), "parse_failures": len(failed),
                          "rate_pct": get_metric(PARSE_FAILURE_RATE).shown(len(failed) / len(records)) if records else float("nan"),
                          "reasons": len(counts), "top_reason": ranked[0][0] if ranked else ""})
        for rank, (reason, count) in enumerate(ranked[:top], start=1):
            example = next(r for r in failed if reason_name(r) == reason)
            reason_rows.append({**combo._asdict(), "rank": rank, "reason": reason, "count": count,
                                "share_of_failures": count / len(failed), "example_id": example.get("id"),
                                "example_error": example.get("parse_error") or UNKNOWN,
                                "example_response": _response(example)})
    return {"rates": pd.DataFrame(rate_rows, columns=RATE_COLUMNS),
            "reasons": pd.DataFrame(reason_rows, columns=REASON_COLUMNS),
            "reasoning": reasoning_table(raw),
            "extractor": extractor_table(raw)}


def reasoning_table(raw: Mapping[Combo, list[dict[str, Any]]]) -> pd.DataFrame:
    """Per (model, task, language, template) of generated replies: reasoning length in characters (over the replies
    that reason), the share cut while reasoning, and the share of answers not in the asked language's script."""
    rows = []
    for combo in sorted(raw):
        records = [r for r in raw[combo] if "cut_while_reasoning" in r]
        if not records:
            continue  # log-likelihood scoring, or scored before replies' structure was recorded
        lengths = pd.Series([r["reasoning_chars"] for r in records if r.get("reasoning_chars")], dtype=float)
        judged = [r["answer_in_script"] for r in records if r.get("answer_in_script") is not None]
        rows.append({**combo._asdict(), "n": len(records), "with_reasoning": len(lengths),
                     "reasoning_chars_mean": round(lengths.mean(), 1) if len(lengths) else float("nan"),
                     "reasoning_chars_median": lengths.median() if len(lengths) else float("nan"),
                     "cut_while_reasoning_pct": round(100 * sum(bool(r["cut_while_reasoning"]) for r in records)
                                                      / len(records), 2),
                     "answers_with_script": len(judged),
                     "answer_off_script_pct": round(100 * sum(not ok for ok in judged) / len(judged), 2)
                     if judged else float("nan")})
    return pd.DataFrame(rows, columns=REASONING_COLUMNS)


def extractor_table(raw: Mapping[Combo, list[dict[str, Any]]]) -> pd.DataFrame:
    """Per (model, task, language, template) with an extractor: its agreement with the rule parser where both read
    an answer, and of the replies the rules could not read, how many the extractor answered and how many not."""
    rows = []
    for combo in sorted(raw):
        records = [r for r in raw[combo] if "extractor_asked" in r]
        if not records:
            continue  # no extractor named, or scored before one was
        both = [r for r in records if r.get("rule_answer") is not None and r.get("extractor_answer") is not None]
        agree = sum(r["rule_answer"] == r["extractor_answer"] for r in both)
        failed_asked = [r for r in records if r.get("rule_answer") is None and r.get("extractor_asked")]
        rows.append({**combo._asdict(), "extractor": records[0].get("extractor"), "n": len(records),
                     "asked": sum(bool(r.get("extractor_asked")) for r in records), "both_read": len(both),
                     "agree": agree, "agreement_pct": round(100 * agree / len(both), 2) if both else float("nan"),
                     "rule_failures": sum(r.get("rule_answer") is None for r in records),
                     "from_extractor": sum(r.get("answer_source") == "extractor" for r in records),
                     "extractor_no_answer": sum(r.get("extractor_answer") is None for r in failed_asked)})
    return pd.DataFrame(rows, columns=EXTRACTOR_COLUMNS)
