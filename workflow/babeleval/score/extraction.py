"""An extractor model: where a template names one (``extractor: <model>``), it reads the answer of a reply the rule
parsers could not read. Off by default.

The extractor is any model of params.yaml ``models``. It is asked with one fixed prompt, ``prompts/extraction.yaml``
(the same for every task and language), through the generation machinery: its answers go into its own response
cache and its calls into a usage file (``babeleval.core.paths.EXTRACTION_USAGE``), which the run summary counts
under the extractor's name. A job per (model, task, template) asks it (workflow/rules/extract.smk) and writes one
file per language (``babeleval.core.paths.EXTRACTIONS``); the scoring job reads them.

What it is asked, and what its reply may change:

- every reply the rule parser read (so that its agreement with the rules is measured, per language: the
  ``extractor_agreement`` table) and every reply it failed on as ``no answer`` or ``ambiguous``, a complete
  reply whose answer the rules did not find. A reply with no final answer to copy is not asked: empty, cut
  while reasoning, cut at the length limit without an explicit answer, a placeholder, an expression where a
  number was asked, and one that restates the options or topics without picking one (the rules decided it
  picks none: read by a model, such a list became its first entry);
- its reply is read by the template's own parser, with the item's labels, language and answer kind
  (``babeleval.score.reading``), exactly as the model's reply was; ``NONE`` is ``no answer``. Nothing is coerced:
  a reply that does not parse leaves the item a parse failure with the rule parser's reason;
- its answer counts only where the rule parser failed. Each scored record says where its answer came from
  (``answer_source``: ``rules``, ``extractor`` or null where neither read one) and keeps both readings
  (``rule_answer`` or ``rule_error``, ``extractor_answer`` or ``extractor_error``; ``extractor_asked``,
  ``extractor``: its name).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from ..core.errors import TemplateError
from ..core.jsonl import read_jsonl, write_jsonl
from ..core.paths import EXTRACTION_PROMPT as PROMPT_FILE
from ..prompts.sandbox import render
from ..prompts.templates import Template, load_template
from .parsers import AMBIGUOUS, KINDS, NO_ANSWER, Parsed, failure, get_parser, reason_of
from .parsers.structure import split_reply
from .reading import has_choices, read, shown_labels

NONE = "NONE"  # what the extractor writes where the reply gives no answer
# the rule parsers' failures whose reply is complete and may still hold an answer the rules did not find
EXTRACTABLE = (NO_ANSWER, AMBIGUOUS)

# a scored record's fields (written only for templates that name an extractor)
ANSWER_SOURCE, RULE_ANSWER, RULE_ERROR, EXTRACTOR_ANSWER, EXTRACTOR_ERROR, EXTRACTOR_ASKED, EXTRACTOR_MODEL = (
    "answer_source", "rule_answer", "rule_error", "extractor_answer", "extractor_error", "extractor_asked",
    "extractor")
RULES, EXTRACTOR = "rules", "extractor"


@dataclass(frozen=True)
class ExtractionPrompt:
    """``prompts/extraction.yaml``: the prompt, each answer kind's instruction and the reply's limits."""

    text: str
    formats: Mapping[str, str]
    max_new_tokens: int
    reply_chars: int
    sha256: str

    def render(self, reply: str, kind: str, labels: Sequence[str] = (),
               options: Sequence[tuple[str, str]] = ()) -> str:
        if len(reply) > self.reply_chars:
            reply = "..." + reply[-self.reply_chars:]
        form = render(self.formats[kind], {"labels": list(labels)})
        return render(self.text, {"reply": reply.strip(), "options": list(options), "format": form, "no_answer": NONE})


def load_prompt(root: str | Path = ".") -> ExtractionPrompt:
    """The extraction prompt file, checked: a missing key or kind is a ``TemplateError`` naming the file."""
    path = Path(root) / PROMPT_FILE
    try:
        raw = path.read_bytes()
        fields = yaml.safe_load(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TemplateError(f"{path}: cannot read the extraction prompt: {exc}") from None
    if not isinstance(fields, dict) or not isinstance(fields.get("prompt"), str):
        raise TemplateError(f"{path}: expected a mapping with 'prompt' (the extraction prompt's text)")
    formats = fields.get("formats")
    if not isinstance(formats, dict) or set(formats) != set(KINDS) or not all(
            isinstance(v, str) for v in formats.values()):
        raise TemplateError(f"{path}: 'formats' must give one instruction for each answer kind: {', '.join(KINDS)}")
    limits = {key: fields.get(key) for key in ("max_new_tokens", "reply_chars")}
    for key, value in limits.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise TemplateError(f"{path}: '{key}' must be a whole number >= 1")
    return ExtractionPrompt(fields["prompt"], dict(formats), limits["max_new_tokens"], limits["reply_chars"],
                            hashlib.sha256(raw).hexdigest())


def settings(prompt: ExtractionPrompt, model_cap: int | None) -> dict[str, Any]:
    """The extractor's decoding settings (greedy, short), as its cache keys and records hold them."""
    cap = prompt.max_new_tokens if model_cap is None else min(prompt.max_new_tokens, model_cap)
    return {"mode": "generate", "do_sample": False, "max_new_tokens": cap, "stop": []}


def asked(parsed: Parsed, record: dict[str, Any]) -> bool:
    """Whether the extractor is asked about a reply the rule parser read as ``parsed``: every reply it read, and a
    complete one it did not (not cut at the length limit or while reasoning, whatever the parser made of it), unless
    the rules decided it gives no answer (it restates the options or topics: ``Parsed.settled``)."""
    if parsed.ok:
        return True
    complete = record.get("finish_reason") != "length" and not split_reply(record["response"]).unfinished
    return complete and not parsed.settled and reason_of(parsed.error or "") in EXTRACTABLE


def request_rows(records: Sequence[dict[str, Any]], template: Template, family: str,
                 prompt: ExtractionPrompt) -> list[dict[str, Any]]:
    """The extractor's requests for one generations file: an item id and its extraction prompt each."""
    kind = get_parser(template.parser).kind
    rows = []
    for record in records:
        if not asked(read(family, record, template, record.get("response"), record.get("finish_reason")), record):
            continue
        labels: Sequence[str] = ()
        options: list[tuple[str, str]] = []
        if has_choices(family):
            labels = shown_labels(record, template) if kind == "letter" else record["choices"]
            options = list(zip(labels, record["choices"])) if kind == "letter" else []
        rows.append({"id": record["id"], "language": record.get("language"),
                     "prompt": prompt.render(record["response"], kind, labels, options)})
    return rows


def read_extracted(family: str, record: dict[str, Any], template: Template, extracted: dict[str, Any]) -> Parsed:
    """The extractor's reply read by the template's parser; ``NONE`` (the prompt's word for no answer) fails."""
    reply = extracted.get("response")
    if isinstance(reply, str) and reply.strip().strip(".:;!。").upper() == NONE:
        return failure(NO_ANSWER, "the extractor found none")
    reading = read(family, record, template, reply, extracted.get("finish_reason"))
    if not reading.ok or not has_choices(family):
        return reading
    if get_parser(template.parser).kind == "letter":
        labels = shown_labels(record, template)
        # the model's reply is one option's text, word for word: only that option's label copies it
        own = [label for label, text in zip(labels, record["choices"]) if _bare(record.get("response")) == _bare(text)]
        if own and reading.answer not in own:
            return failure(AMBIGUOUS, f"the extractor wrote label {reading.answer} for a reply that is the text of "
                                      f"option {own[0]}")
        others = [label for label, text in zip(labels, record["choices"])
                  if label != reading.answer and _names(reply, text)]
        what = f"label {reading.answer} with the text of option {', '.join(others)}"
    else:
        others = [label for label in record["choices"] if label != reading.answer and _names(reply, label)]
        what = f"{reading.answer} and {', '.join(others)}"
    # an extractor that writes one option's label beside another's text ("A. Paris", Paris being B), or lists
    # several classes, has not settled on one answer: never its first
    return failure(AMBIGUOUS, f"the extractor wrote {what}") if others else reading


def _bare(text: Any) -> str:
    """A text without case, edge punctuation and spaces, to tell a reply that is an option's text word for word."""
    return "".join(str(text or "").casefold().split()).strip(".,;:!?。、「」\"'")


def _names(reply: str, text: str) -> bool:
    """Whether ``reply`` holds ``text`` (three characters or more) as words of their own, case aside."""
    text = text.strip().casefold()
    return len(text) >= 3 and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", reply.casefold()) is not None


def answer(family: str, record: dict[str, Any], template: Template, extracted: dict[str, Any] | None
           ) -> tuple[Parsed, dict[str, Any]]:
    """The item's answer and, for a template with an extractor, where it came from and both readings.

    The rule parser's answer stands wherever it read one; the extractor's is taken only where the rules failed
    on a complete reply and the extractor's reply parses."""
    rule = read(family, record, template, record.get("response"), record.get("finish_reason"))
    if template.extractor is None:
        return rule, {}
    fields: dict[str, Any] = {EXTRACTOR_MODEL: template.extractor, ANSWER_SOURCE: RULES if rule.ok else None,
                              RULE_ANSWER: rule.answer, RULE_ERROR: rule.error,
                              EXTRACTOR_ASKED: extracted is not None, EXTRACTOR_ANSWER: None, EXTRACTOR_ERROR: None}
    if extracted is None or not asked(rule, record):
        return rule, fields
    reading = read_extracted(family, record, template, extracted)
    fields.update({EXTRACTOR_ANSWER: reading.answer, EXTRACTOR_ERROR: reading.error})
    if rule.ok or not reading.ok:
        return rule, fields
    fields[ANSWER_SOURCE] = EXTRACTOR
    return reading, fields


def by_id(path: str | None) -> dict[Any, dict[str, Any]] | None:
    """An extraction file's records by item id (None without a file: the template names no extractor)."""
    return None if path is None else {row["id"]: row for row in read_jsonl(path)}


# -- the workflow's job (workflow/scripts/extract.py): these requests, answered by the generation stage's job ------


def write_requests(task: str, template: str, family: str, generations: Sequence[str], folder: str | Path
                   ) -> dict[str, str]:
    """The extractor's request files for one (model, task, template), one per generations file, written under
    ``folder``: label (the file's position) -> its path. The generation stage answers them
    (``babeleval.generate.job.answer_job``), so scoring never imports the backends."""
    loaded = load_template(task, template)
    prompt = load_prompt()
    requests = {}
    for number, path in enumerate(generations):
        requests[str(number)] = str(Path(folder) / f"{number}.jsonl")
        write_jsonl(requests[str(number)], request_rows(read_jsonl(path), loaded, family, prompt))
    return requests
