"""Check a parser against your own model outputs.

    python -m babeleval parse --list
    python -m babeleval parse --parser final_letter < outputs.jsonl
    python -m babeleval parse --parser topic --labels "science/technology,travel,sports" outputs.jsonl
    python -m babeleval parse --params params.yaml --parser my_parser outputs.jsonl

Reads JSON Lines, each with a ``response`` field (a raw file from
``results/raw/`` works as it is), and writes one JSON line per input line:
``{"line": N, "id": ..., "answer": "B"}`` or ``{"line": N, "id": ..., "error": "reason"}``.
A line's own ``choices`` (or ``labels``) field gives a letter parser its number
of choices (and the options' texts) and a label parser its labels; its ``enumerators`` field (the labels the
prompt showed where they were not A, B, C ..., as raw files of such templates have) the choice labels; ``--choices`` / ``--labels`` give them
for lines without; its ``language`` field (a FLORES-200 code, as raw files have) gives the item's language
(answer phrases read first, how numbers are written), and its ``finish_reason`` "length" marks a reply that
stopped at the token limit. A summary goes to standard error: lines read, answers read, and the failures
counted by reason name (``no answer``, ``ambiguous``, ``cut at the length limit`` ...), each with the lines
of its first examples, so a parser can be checked on your outputs before a run. A parser defined in an extension file is known once ``--params`` names the
params.yaml that lists the file under ``modules``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import IO, Iterable

from ..core.errors import ConfigError
from ..grid.params import load_extensions, read_params_file
from ..score.parsers import PARSERS, parse, reason_of

# How many example lines the summary names for each failure reason.
_EXAMPLES = 5


def parse_lines(lines: Iterable[str], parser: str, n_choices: int = 4, labels: list[str] | None = None,
                out: IO[str] = sys.stdout, examples: dict[str, list[int]] | None = None) -> Counter:
    """Parse every line; write one result line each; return counts of outcomes ("parsed", or "error: <reason
    name>"), and note in ``examples`` the first line numbers of each failure reason."""
    counts: Counter = Counter()
    examples = {} if examples is None else examples
    kind = PARSERS[parser].kind
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        result: dict = {"line": number}
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            result["error"] = f"not valid JSON ({exc.msg})"
            counts["error: not valid JSON"] += 1
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
            continue
        if not isinstance(row, dict) or not isinstance(row.get("response"), str):
            result["error"] = "no 'response' text field"
            counts["error: no 'response' text field"] += 1
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
            continue
        if "id" in row:
            result["id"] = row["id"]
        row_choices = row.get("choices") or row.get("labels")
        n = len(row_choices) if isinstance(row_choices, list) and row_choices else n_choices
        row_labels = row_choices if isinstance(row_choices, list) and row_choices else (labels or [])
        if kind == "label" and not row_labels:
            result["error"] = "no labels: give --labels or a 'labels'/'choices' field"
            counts["error: no labels"] += 1
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
            continue
        shown = row.get("enumerators") if isinstance(row.get("enumerators"), list) else None
        try:
            parsed = parse(parser, row["response"], n_choices=len(shown) if shown else n, labels=row_labels,
                           language=row.get("language"), finish_reason=row.get("finish_reason"),
                           choice_labels=shown, options=row_choices if isinstance(row_choices, list) else None)
        except ConfigError as exc:  # labels this parser does not read
            result["error"] = str(exc)
            counts["error: labels the parser does not read"] += 1
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
            continue
        if parsed.ok:
            result["answer"] = parsed.answer
            counts["parsed"] += 1
        else:
            result["error"] = parsed.error
            reason = f"error: {reason_of(parsed.error)}"
            counts[reason] += 1
            if len(examples.setdefault(reason, [])) < _EXAMPLES:
                examples[reason].append(number)
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return counts


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(prog="python -m babeleval parse", description=__doc__.split("\n\n")[0],
                                  formatter_class=argparse.RawDescriptionHelpFormatter,
                                  epilog=__doc__.split("\n\n", 1)[1])
    cli.add_argument("--parser", help="parser name (see --list)")
    cli.add_argument("--list", action="store_true", help="list the parsers and what they read")
    cli.add_argument("--choices", type=int, default=4, help="number of choices for letter parsers (default 4)")
    cli.add_argument("--labels", help="comma-separated labels for label parsers (e.g. topics)")
    cli.add_argument("--params", help="a params.yaml: load the parsers its extension files ('modules') define")
    cli.add_argument("file", nargs="?", help="JSON Lines file (default: standard input)")
    args = cli.parse_args(argv)
    if args.params:
        try:
            load_extensions(read_params_file(args.params), args.params, ".")
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.list:
        for name in sorted(PARSERS):
            parser = PARSERS[name]
            print(f"{name:18} {parser.kind:7} {parser.doc}")
        return 0
    if not args.parser:
        cli.error("--parser is required (or --list)")
    if args.parser not in PARSERS:
        print(f"error: {PARSERS.unknown(args.parser)}", file=sys.stderr)
        return 2
    labels = [label.strip() for label in args.labels.split(",")] if args.labels else None
    try:
        handle = open(args.file, encoding="utf-8") if args.file else sys.stdin
    except OSError as exc:
        print(f"error: {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    examples: dict[str, list[int]] = {}
    with handle:
        counts = parse_lines(handle, args.parser, args.choices, labels, examples=examples)
    total = sum(counts.values())
    print(f"{total} lines, {counts['parsed']} parsed, {total - counts['parsed']} failures", file=sys.stderr)
    for reason, count in counts.most_common():
        if reason != "parsed":
            lines = ", ".join(str(n) for n in examples.get(reason, []))
            print(f"  {count:5}  {reason}" + (f"  (lines {lines})" if lines else ""), file=sys.stderr)
    return 0

