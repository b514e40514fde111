"""The parser corpus: real-shaped responses in many languages and scripts, each with the outcome the model meant.

``tests/data/parser_corpus.yaml`` holds the responses (written for these tests) with their class and expected
outcome: the answer, or ``FAIL <reason name>`` where no answer can be read unambiguously. A failure must come
back as that named reason (``Parsed.reason``), never as an answer.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from babeleval.parsers import REASONS, parse

CORPUS = yaml.safe_load((Path(__file__).parent / "data" / "parser_corpus.yaml").read_text(encoding="utf-8"))
FAIL = "FAIL "


def outcome(entry: dict) -> str:
    parsed = parse(entry["parser"], entry["response"], n_choices=entry.get("n", 4), language=entry["lang"])
    return parsed.answer if parsed.ok else FAIL + parsed.reason


@pytest.mark.parametrize("entry", CORPUS, ids=[e["id"] for e in CORPUS])
def test_corpus_entry(entry):
    assert outcome(entry) == str(entry["expect"]), entry["response"]


def test_corpus_is_broad():
    """At least 150 responses, 12 languages and 6 scripts; every expected failure is a named reason."""
    assert len(CORPUS) >= 150
    assert len({e["id"] for e in CORPUS}) == len(CORPUS)
    assert len({e["lang"] for e in CORPUS}) >= 12
    assert len({e["lang"].split("_")[1] for e in CORPUS}) >= 6
    for entry in CORPUS:
        expect = str(entry["expect"])
        if expect.startswith(FAIL):
            assert expect[len(FAIL):] in REASONS, entry["id"]
    classes = Counter(e["class"] for e in CORPUS)
    assert min(classes.values()) >= 8, classes
