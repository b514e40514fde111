"""The parser corpus (tests/data/parser_corpus.yaml) by class: how many entries each parser version reads as meant.

Per class: entries, read as meant (the answer, or the failure under its expected name), wrong (an answer where
another answer or a failure was meant), missed (a failure where an answer was meant, or a failure under another
name). Run it against another version of the parsers by putting that version's package first on the path:

    python bench/parser_corpus_classes.py                                   # this checkout
    git archive <commit> workflow | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before/workflow python bench/parser_corpus_classes.py   # that commit

A version that does not take the template's choice labels or the options' texts is called without them.
"""

from __future__ import annotations

import inspect
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from babeleval.score.parsers import parse, reason_of

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "parser_corpus.yaml"
TOPICS = ["science/technology", "travel", "politics", "sports", "health", "entertainment", "geography"]
FAIL = "FAIL "


def outcome(entry: dict, takes: set[str]) -> str:
    labels = entry.get("labels")
    extra = {}
    if "choice_labels" in takes:
        extra = {"choice_labels": labels, "options": entry.get("options")}
    try:
        parsed = parse(entry["parser"], entry["response"], n_choices=len(labels) if labels else entry.get("n", 4),
                       labels=TOPICS, language=entry["lang"], finish_reason=entry.get("finish"), **extra)
    except Exception as exc:  # an older version may not read a class at all
        return f"{FAIL}error {type(exc).__name__}"
    return parsed.answer if parsed.ok else FAIL + reason_of(parsed.error)


def main() -> None:
    takes = set(inspect.signature(parse).parameters)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for entry in yaml.safe_load(CORPUS.read_text(encoding="utf-8")):
        got, expect = outcome(entry, takes), str(entry["expect"])
        row = counts[entry["class"]]
        row["n"] += 1
        row["right" if got == expect else "wrong" if not got.startswith(FAIL) else "missed"] += 1
    print(f"parsers from {Path(inspect.getfile(parse)).parent}", file=sys.stderr)
    print(f"{'class':<20} {'n':>4} {'right':>6} {'wrong':>6} {'missed':>7}")
    total: dict[str, int] = defaultdict(int)
    for name, row in counts.items():
        print(f"{name:<20} {row['n']:>4} {row['right']:>6} {row['wrong']:>6} {row['missed']:>7}")
        for key, value in row.items():
            total[key] += value
    print(f"{'all':<20} {total['n']:>4} {total['right']:>6} {total['wrong']:>6} {total['missed']:>7}")


if __name__ == "__main__":
    main()
