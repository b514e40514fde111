"""A reply's structure, before its answer: the reasoning, the final answer section, and the chat turns it leaked.

Reasoning models wrap their thinking in their family's own markers. Each wrapper read here is written as the
canonical ``<think>`` ... ``</think>`` before the reply is split (``WRAPPERS``, each with where its format is
published):

==================================================  ========================================================
wrapper                                             families
==================================================  ========================================================
``<think>`` ... ``</think>``, also ``<thinking>``,  DeepSeek-R1, QwQ, Qwen3, SmolLM3, Phi-4-reasoning (vLLM
``<reasoning>``; a lone ``</think>`` when the        "Reasoning Outputs"; SGLang "Reasoning Parser": R1's
chat template opened the block                      template opens the block, the reply has only ``</think>``)
``[THINK]`` ... ``[/THINK]``                        Magistral (llama.cpp's Magistral chat format)
``◁think▷`` ... ``◁/think▷``                        Kimi thinking models (SGLang "Reasoning Parser", kimi_k2)
``<|im_start|>think`` ... ``<|im_start|>answer``    s1 / s1.1 (simplescaling, budget forcing in lm-eval)
``<|channel|>analysis<|message|>`` ... ``<|end|>``  gpt-oss, the harmony format (openai-harmony; SGLang
``<|start|>assistant<|channel|>final<|message|>``   gpt-oss parser); decoded without special tokens it reads
                                                    ``analysis`` ... ``assistantfinal``
"Here is my thought process:" ... "Here is my       IBM Granite 3.2 (vLLM's ``granite`` reasoning parser);
response:"                                          Granite 3.3 writes ``<think>`` and ``<response>``
==================================================  ========================================================

A reply that is a JSON object ``{"reasoning": ..., "answer": ...}`` (a constrained answer slot's
``response_format``) is read as that reasoning and that answer.

Then the reply is cut at its first leaked chat turn or end-of-turn token (``<|im_end|>``, ``</s>``, ``<|eot_id|>``,
``[INST]``, "\\nUser:", a line that is nothing but ``user`` or ``assistant``: a chat model's turn written without
its special tokens); a role header the reply opens with (``<|im_start|>assistant``, ``assistant``) is its own and
dropped. A reply that ends inside a reasoning block was cut while reasoning (``split_reply(...).unfinished``).

``facts`` gives what the per-item record keeps of this structure: the reasoning's length in characters (scoring
has no tokenizer) and the scripts of the reasoning and of the answer section.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Wrapper:
    """One family's reasoning markers, as regular expressions, and where the format is published."""

    family: str
    opens: str
    closes: str
    source: str


WRAPPERS = (
    Wrapper("Magistral", r"\[THINK\]", r"\[/THINK\]", "llama.cpp common/chat: Magistral format"),
    Wrapper("Kimi", r"◁think▷", r"◁/think▷", "SGLang docs, Reasoning Parser (kimi_k2)"),
    Wrapper("s1", r"<\|im_start\|>[ \t]*think\b", r"<\|im_start\|>[ \t]*answer\b",
            "simplescaling/s1 (budget forcing), lm-eval budget-forcing example"),
    Wrapper("gpt-oss (harmony)", r"(?:<\|start\|>\s*assistant\s*)?<\|channel\|>\s*analysis\s*<\|message\|>",
            r"(?:<\|end\|>\s*)?(?:<\|start\|>\s*assistant\s*)?<\|channel\|>\s*final\s*<\|message\|>",
            "openai-harmony response format; SGLang docs, Reasoning Parser (gpt-oss)"),
    Wrapper("Granite 3.2", r"Here(?: is|'s) my thought process:", r"Here(?: is|'s) my response:",
            "vLLM reasoning parser 'granite'"),
)
# The harmony format decoded without its special tokens: "analysis" ... "assistantfinal", only as a pair.
_HARMONY_PLAIN = re.compile(r"^\s*analysis(?=\S)(.*?)assistantfinal", re.DOTALL)
_WRAPPER_MARKS = [(re.compile(w.opens), "<think>") for w in WRAPPERS] + \
                 [(re.compile(w.closes), "</think>") for w in WRAPPERS]

# Any of these opens or closes a reasoning block; a block opened with one name and closed with another counts.
_REASONING_TAG = re.compile(r"<(/?)(think|thinking|reasoning)>", re.IGNORECASE)

# A role header the reply opens with: the model wrote its own turn's start.
_OWN_HEADER = re.compile(r"^\s*(?:<\|im_start\|>|<\|start_header_id\|>|<start_of_turn>|<\|start\|>)?\s*"
                         r"(?:assistant|model)\s*(?:<\|end_header_id\|>|<\|message\|>)?[ \t]*\n", re.IGNORECASE)
# Where a chat model's turn ends, or a next turn it made up begins: nothing after it is the answer.
_TURN_END = re.compile(
    r"<\|im_end\|>|<\|im_start\|>|<\|eot_id\|>|<\|end\|>|<\|endoftext\|>|<\|end_of_text\|>|<\|user\|>|<\|return\|>"
    r"|<\|start_header_id\|>|<end_of_turn>|<start_of_turn>|</s>|\[INST\]|<\|assistant\|>|<\|start\|>"
    r"|\n\s*(?:User|USER|Human|HUMAN|Question|Q|### (?:Human|User|Instruction))\s*:"
    r"|\n[ \t]*(?:user|assistant|system)[ \t]*(?:\n|$)",
)


def _from_json(response: str) -> str | None:
    """A reply that is a JSON object with an ``answer`` (a constrained answer slot's ``response_format``,
    ``babeleval.prompts.answer_slot``), as reasoning and a tagged answer; None for any other reply."""
    text = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", response)
    if not (text.startswith("{") and text.rstrip().endswith("}")):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or "answer" not in value or isinstance(value["answer"], (dict, list)):
        return None
    reasoning = value.get("reasoning")
    thought = f"<think>{reasoning}</think>" if isinstance(reasoning, str) and reasoning else ""
    return f"{thought}<final_answer>{value['answer']}</final_answer>"


def canonical(response: str) -> str:
    """The reply with every family's reasoning wrapper written as ``<think>`` ... ``</think>``; a JSON answer
    object as its reasoning and a tagged answer."""
    structured = _from_json(response)
    if structured is not None:
        return structured
    text = _HARMONY_PLAIN.sub(lambda m: f"<think>{m.group(1)}</think>", response, count=1)
    for pattern, tag in _WRAPPER_MARKS:
        text = pattern.sub(tag, text)
    return _OWN_HEADER.sub("", text, count=1)


@dataclass(frozen=True)
class Reply:
    """A response split into its parts.

    ``text``: what the model wrote outside reasoning blocks, cut at a leaked turn (the final answer section);
    ``reasoning``: the content of the last closed block (read only when ``text`` is empty: an answer inside a block
    counts when nothing follows it); ``unfinished``: the content of a block never closed (the reply was cut while
    reasoning), else None; ``thought``: all the reasoning the reply holds, for its length and script.
    """

    text: str
    reasoning: str = ""
    unfinished: str | None = None
    thought: str = ""


def _cut_turn(text: str) -> str:
    turn = _TURN_END.search(text)
    return text[: turn.start()] if turn else text


def split_reply(response: str) -> Reply:
    """Walk the reasoning tags in order: text at depth 0 is the reply; a block closes with any reasoning tag."""
    response = canonical(response)
    outside: list[str] = []
    blocks: list[str] = []
    last_block = ""
    pos = depth = start = 0
    opener = ""
    for tag in _REASONING_TAG.finditer(response):
        if tag.group(1) != "/":
            if depth == 0:
                outside.append(response[pos:tag.start()])
                start, opener = tag.end(), tag.group(2).lower()
            depth += 1
        elif depth == 0:
            # a close with no open: the template opened the block, so everything before it was reasoning
            last_block, pos = response[pos:tag.start()], tag.end()
            blocks, outside = ["".join(outside) + last_block], []
        else:
            depth -= 1
            if depth == 0:
                last_block, pos = response[start:tag.start()], tag.end()
                blocks.append(last_block)
    unfinished = None
    if depth:
        if opener == "reasoning":
            # the instruction's "<reasoning> #### <letter>" copied as a heading: what follows is the reply itself
            outside.append(response[start:])
        else:
            unfinished = _cut_turn(response[start:])
            blocks.append(unfinished)
    else:
        outside.append(response[pos:])
    return Reply(_cut_turn("".join(outside)), _cut_turn(last_block), unfinished, "\n".join(blocks).strip())


# -- what the record keeps: the reasoning's length, and the scripts of reasoning and answer -----------------

# Unicode name prefixes and the ISO 15924 code FLORES-200 names a language's script by.
_SCRIPTS = (("LATIN", "Latn"), ("CYRILLIC", "Cyrl"), ("ARABIC", "Arab"), ("DEVANAGARI", "Deva"),
            ("BENGALI", "Beng"), ("GURMUKHI", "Guru"), ("GUJARATI", "Gujr"), ("ORIYA", "Orya"), ("TAMIL", "Taml"),
            ("TELUGU", "Telu"), ("KANNADA", "Knda"), ("MALAYALAM", "Mlym"), ("SINHALA", "Sinh"), ("THAI", "Thai"),
            ("LAO", "Laoo"), ("TIBETAN", "Tibt"), ("MYANMAR", "Mymr"), ("GEORGIAN", "Geor"), ("HANGUL", "Hang"),
            ("ETHIOPIC", "Ethi"), ("KHMER", "Khmr"), ("GREEK", "Grek"), ("HEBREW", "Hebr"), ("ARMENIAN", "Armn"),
            ("HIRAGANA", "Jpan"), ("KATAKANA", "Jpan"), ("CJK", "Hani"))
# Fewer letters than this do not show a language's script: "#### B" is a choice label, not Latin prose.
MIN_LETTERS = 12
# Scripts a language's own script name covers: Chinese and Japanese are written with Han characters.
_COVERS = {"Hans": {"Hani"}, "Hant": {"Hani"}, "Jpan": {"Hani"}, "Kore": {"Hang", "Hani"}}


@lru_cache(maxsize=4096)
def _char_script(char: str) -> str:
    name = unicodedata.name(char, "")
    return next((code for prefix, code in _SCRIPTS if name.startswith(prefix)), "Zyyy")


def script(text: str) -> str | None:
    """The script most of the text's letters are in (ISO 15924: Latn, Cyrl, Hani, Jpan ...), None with fewer than
    ``MIN_LETTERS`` letters. Japanese: kana in a tenth of the letters make Han text Japanese."""
    counts = Counter(_char_script(char) for char in text if char.isalpha())
    total = sum(counts.values())
    if total < MIN_LETTERS:
        return None
    if counts["Jpan"] * 10 >= total and counts["Jpan"] + counts["Hani"] >= total / 2:
        return "Jpan"
    return counts.most_common(1)[0][0]


def in_script(seen: str | None, language: str | None) -> bool | None:
    """Whether text in script ``seen`` is in the script of ``language`` (a FLORES-200 code); None if either is
    unknown. A script, not a language: French written for a German item is in the asked script."""
    if seen is None or not language or "_" not in language:
        return None
    asked = language.rpartition("_")[2]
    return seen == asked or seen in _COVERS.get(asked, set())


def facts(response: str | None, language: str | None) -> dict[str, object]:
    """What a per-item record keeps of a reply's structure: ``reasoning_chars`` (characters: scoring has no
    tokenizer), ``reasoning_script``, ``cut_while_reasoning``, ``answer_script`` and ``answer_in_script`` (the
    answer section in the asked language's script; None where it has too few letters to tell)."""
    if not isinstance(response, str):
        return {}
    reply = split_reply(response)
    answer = script(reply.text)
    return {"reasoning_chars": len(reply.thought), "reasoning_script": script(reply.thought),
            "cut_while_reasoning": reply.unfinished is not None, "answer_script": answer,
            "answer_in_script": in_script(answer, language)}
