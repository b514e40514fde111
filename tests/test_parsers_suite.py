"""Parsers against what models really write: a table of messy outputs per parser.

Each row: the response, and the answer expected or ``FAIL: <part of the reason>``.
A failure must come back as an explicit reason, never as an answer.
"""

from __future__ import annotations

import pytest

from babeleval.core.numbers import canonical_number
from babeleval.score.parsers import PARSERS, parse, reason_of

FAIL = "FAIL: "

LETTER_CASES = [
    # the protocol's own format
    ("The capital is Paris, so C.\n#### C", "C"),
    ("Reasoning...\n\n####C", "C"),
    ("#### (B)", "B"),
    ("#### B) Mercury", "B"),
    ("#### **D**", "D"),
    ("#### b", "B"),
    ("#### Answer: A", "A"),
    ("#### Option D", "D"),
    # marker on its own line, answer on the next
    ("Let me think.\n####\nB", "B"),
    ("####\n\n  C.  ", "C"),
    # first / last / repeated markers: the last readable one wins
    ("#### A\nWait, that is wrong.\n#### C", "C"),
    ("#### B\n#### B", "B"),
    ("Step 1 ... #### A ... on reflection the answer stays A #### A", "A"),
    # copied placeholder and instruction echoes are skipped
    ("Response format: <reasoning> #### <letter>\nVenus is second. #### B", "B"),
    ("Sure. <reasoning> #### <letter>", FAIL + "placeholder"),
    ("#### <letter>\n\nThe answer is B", "B"),
    # closing tags and leaked chat turns after the answer
    ("It is oxygen.\n#### C</s>", "C"),
    ("#### A<|im_end|>\n<|im_start|>user\nSolve ... #### <letter>", "A"),
    ("#### D\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n#### A", "D"),
    ("#### B\nUser: thanks! #### C", "B"),
    ("#### A</answer>", "A"),
    # <final_answer> tags (the protocol's later version)
    ("Thinking about it...\n<final_answer>B</final_answer>", "B"),
    ("<final_answer> (C) </final_answer>", "C"),
    ("<final_answer>D", "D"),
    ("#### A\n<final_answer>B</final_answer>", "B"),
    # think blocks
    ("<think>Maybe A? #### A</think>\nThe answer: #### C", "C"),
    ("I considered A.</think>#### D", "D"),
    ("<think>Let me consider all the options carefully, A seems", FAIL + "cut while reasoning"),
    # no marker: explicit answer phrases, boxed, bold, a lone letter
    ("The answer is (B).", "B"),
    ("After checking, the correct answer is C because ...", "C"),
    ("Answer: D", "D"),
    ("So we get $\\boxed{A}$.", "A"),
    ("The best option is **C**.", "C"),
    ("B", "B"),
    ("(D)", "D"),
    ("答え：B", "B"),
    # unreadable
    ("", FAIL + "empty"),
    ("   \n ", FAIL + "empty"),
    ("I think Venus is the closest planet.", FAIL + "no answer marker"),
    ("#### E", FAIL + "no choice letter"),
    ("#### Mercury", FAIL + "no choice letter"),
    ("The answer is a planet.", FAIL + "no answer marker"),
]


@pytest.mark.parametrize("response,expected", LETTER_CASES)
def test_final_letter(response, expected):
    parsed = parse("final_letter", response, n_choices=4)
    if expected.startswith(FAIL):
        assert not parsed.ok and parsed.answer is None
        assert expected[len(FAIL):] in parsed.error
    else:
        assert parsed.ok, parsed.error
        assert parsed.answer == expected


def test_hash_letter_reads_only_the_marker():
    assert parse("hash_letter", "blah #### C").answer == "C"
    parsed = parse("hash_letter", "The answer is (B).")
    assert not parsed.ok and "no '####' marker" in parsed.error
    assert parse("hash_letter", "#### A<|im_end|>user: #### B").answer == "A"


def test_letter_respects_the_number_of_choices():
    assert parse("final_letter", "#### E", n_choices=5).answer == "E"
    assert not parse("final_letter", "#### E", n_choices=4).ok


NUMBER_CASES = [
    ("12 - 5 + 8 = 15\n#### 15", "15"),
    ("#### $1,234", "1234"),
    ("#### 1,234,567", "1234567"),
    ("#### 1 234", "1234"),
    ("#### 3.50", "3.5"),
    ("#### 6.0", "6"),
    ("#### -7", "-7"),
    ("#### −7", "-7"),
    ("#### +4", "4"),
    ("#### 0.25 kg", "0.25"),
    ("#### 3,5", "3.5"),            # decimal comma
    ("#### 1.234,5", "1234.5"),     # European thousands dot and decimal comma
    ("#### ١٥", "15"),              # Arabic-Indic digits
    ("#### ४२", "42"),              # Devanagari digits
    ("#### ４２個", "42"),          # full-width digits
    ("#### ৯০০", "900"),            # Bengali digits
    ("答えは 29 ドルです。\n#### 29ドル", "29"),
    ("#### 40\n#### 40", "40"),
    ("#### 12\nHmm, recheck: 12 + 3 = 15\n#### 15", "15"),
    ("####\n900", "900"),
    ("#### <number>\nSo the farm keeps 900.\n#### 900", "900"),
    ("There are 6 pieces.\n<final_answer>6</final_answer>", "6"),
    ("<think>#### 5</think> #### 6", "6"),
    ("#### 12</s>", "12"),
    ("#### 29<|im_end|><|im_start|>user\n#### 3", "29"),
    ("The answer is 40.", "40"),
    ("Thus \\boxed{1,200}", "1200"),
    ("**900**", "900"),
    ("15", "15"),
    ("", FAIL + "empty"),
    ("She has fifteen apples.", FAIL + "no answer marker"),
    ("#### fifteen", FAIL + "no number"),
    ("#### <number>", FAIL + "placeholder"),
    ("There are 3 buses and 12 people", FAIL + "no answer marker"),
]


@pytest.mark.parametrize("response,expected", NUMBER_CASES)
def test_final_number(response, expected):
    parsed = parse("final_number", response)
    if expected.startswith(FAIL):
        assert not parsed.ok
        assert expected[len(FAIL):] in parsed.error
    else:
        assert parsed.ok, parsed.error
        assert parsed.answer == expected


def test_numbers_are_canonical():
    from decimal import Decimal

    assert canonical_number(Decimal("1.500")) == "1.5"
    assert canonical_number(Decimal("-0")) == "0"
    assert canonical_number(Decimal("1E+3")) == "1000"


TOPICS = ["science/technology", "travel", "sports", "health", "politics"]
TOPIC_CASES = [
    ("travel", "travel"),
    ("Travel", "travel"),
    ("Travel.", "travel"),
    ("  sports\n", "sports"),
    ("**health**", "health"),
    ("Science/Technology", "science/technology"),
    ("science/technology - the text is about a robot", "science/technology"),
    ("politics, although it mentions travel", "politics"),      # starts with the topic: accepted (languagebench)
    ("The topic is travel.", "travel"),                          # names only one topic
    ("I would say this text is about sports", "sports"),
    ("<think>maybe travel or sports</think>sports", "sports"),
    ("It could be travel or sports.", FAIL + "several topics"),
    ("geography", FAIL + "none of the topics"),
    ("", FAIL + "empty"),
]


@pytest.mark.parametrize("response,expected", TOPIC_CASES)
def test_topic(response, expected):
    parsed = parse("topic", response, labels=TOPICS)
    if expected.startswith(FAIL):
        assert not parsed.ok
        assert expected[len(FAIL):] in parsed.error
    else:
        assert parsed.ok, parsed.error
        assert parsed.answer == expected


def test_topic_label_inside_a_longer_label_is_one_mention():
    labels = ["science", "science/technology", "travel"]
    assert parse("topic", "this is science/technology", labels=labels).answer == "science/technology"


SPAN_CASES = [
    ("1872年", "1872年"),
    (" 栄西\n[題名]:次", "栄西"),
    ("観音埼灯台<NL>ユーザー: 次", "観音埼灯台"),
    ("\n", FAIL + "empty"),
    ("", FAIL + "empty"),
]


@pytest.mark.parametrize("response,expected", SPAN_CASES)
def test_jsquad_span(response, expected):
    parsed = parse("jsquad_span", response)
    if expected.startswith(FAIL):
        assert not parsed.ok and expected[len(FAIL):] in parsed.error
    else:
        assert parsed.answer == expected


TRANSLATION_CASES = [
    ("  Le chat dort.  ", "Le chat dort."),
    ("<think>the word for cat...</think>\nLe chat dort.", "Le chat dort."),
    ("Le chat dort.<|im_end|>\n<|im_start|>user\nmore", "Le chat dort."),
    ("<final_answer>Le chat dort.</final_answer>", "Le chat dort."),
    ("", FAIL + "empty"),
    ("<think>still thinking", FAIL + "cut while reasoning"),
]


@pytest.mark.parametrize("response,expected", TRANSLATION_CASES)
def test_translation(response, expected):
    parsed = parse("translation", response)
    if expected.startswith(FAIL):
        assert not parsed.ok and expected[len(FAIL):] in parsed.error
    else:
        assert parsed.answer == expected


def test_every_parser_has_a_kind_and_a_doc():
    for name, parser in PARSERS.items():
        assert parser.kind in ("letter", "label", "number", "text"), name
        assert parser.doc, name


def test_no_response_is_a_failure():
    for name in PARSERS:
        parsed = parse(name, None, labels=TOPICS)
        assert not parsed.ok and parsed.error == "no text response: got null"
        assert reason_of(parsed.error) == "no text response"
