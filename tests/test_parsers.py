"""The Belebele parsers against their seeds' behaviour and against messy real-looking outputs."""

import pytest

from babeleval.core.errors import ConfigError
from babeleval.score.parsers import PARSERS, get_parser
from babeleval.score.parsers.letters import belebele_blog, belebele_instruct


@pytest.mark.parametrize("response, expected", [
    # the Belebele authors' chat protocol: answers accepted as "A" or "(A)"
    ("A", "A"),
    ("(C)", "C"),
    (" (D) ", "D"),
    # the Belebele authors' chat protocol: the prefix "The correct answer is " is removed
    ("The correct answer is (B)", "B"),
    ("The correct answer is B.", "B"),
    ("the correct answer is D", "D"),
    # a letter standing alone at the start, with the choice text after it
    ("(A) Strong smells", "A"),
    ("B. Failure to maintain distance", "B"),
    ("C\nbecause the passage says so", "C"),
    # the docs promise "The answer is (B)": other answer prefixes are dropped too
    ("The answer is (B)", "B"),
    ("Answer: D", "D"),
    ("answer: (A) Strong smells", "A"),
])
def test_instruct_reads_letters(response, expected):
    assert belebele_instruct(response) == belebele_instruct(response)  # pure
    parsed = belebele_instruct(response)
    assert parsed.ok and parsed.answer == expected


@pytest.mark.parametrize("response, reason", [
    ("", "empty"),
    ("   ", "empty"),
    ("()", "empty"),
    # the Belebele authors' chat protocol fell back to the first character: "According..." would have been read as "A"
    ("According to the passage, the answer is B", "no choice letter"),
    ("E", "no choice letter"),
    ("I think it is B", "no choice letter"),
    ("答えはBです", "no choice letter"),
])
def test_instruct_reports_failures(response, reason):
    parsed = belebele_instruct(response)
    assert not parsed.ok and parsed.answer is None
    assert reason in parsed.error


def test_instruct_respects_number_of_choices():
    assert not belebele_instruct("D", n_choices=3).ok
    assert belebele_instruct("C", n_choices=3).answer == "C"


@pytest.mark.parametrize("response, expected", [
    # the Belebele tutorial blog's parse_choice: a lone letter...
    ("A", "A"),
    (" B", "B"),
    # ...or a letter followed by something that is not a letter
    ("C.", "C"),
    ("D) yes", "D"),
    ("A\nQuestion: next", "A"),         # only the first line counts
    (" B\n\nThe passage", "B"),
    # "The answer is (B)", as the docs promise: the prefix and the brackets around the letter are dropped
    ("The answer is (B)", "B"),
    ("Answer: A", "A"),
    ("The correct answer is C. Because the passage says so.", "C"),
])
def test_blog_parse_choice(response, expected):
    parsed = belebele_blog(response)
    assert parsed.ok and parsed.answer == expected


@pytest.mark.parametrize("response, reason", [
    ("", "empty"),
    ("\nA", "empty"),                   # the first line is empty: parse_choice would index an empty string
    ("Answers vary", "does not start"), # 'A' of "Answers" is followed by a letter
    ("All of them", "does not start"),
    ("E", "does not start"),
    ("(A)", "does not start"),          # parse_choice does not strip parentheses
])
def test_blog_failures(response, reason):
    parsed = belebele_blog(response)
    assert not parsed.ok and reason in parsed.error


def test_registry_names_and_unknown_parser():
    assert {"belebele_instruct", "belebele_blog"} <= set(PARSERS)
    with pytest.raises(ConfigError, match=r"unknown parser 'belebele_instrct' \(known: .*; did you mean "
                                          r"'belebele_instruct'\?\)"):
        get_parser("belebele_instrct")
