"""Constrained answers, opt-in per template: after the reasoning, the answer slot admits only an answer.

A template that declares

    answer_slot:
      holds: labels          # labels (the template's choice labels), choices (the item's own: topic names), number
      after: "####"          # where the slot opens: after this text ("" : the whole reply is the answer)
      api: json_schema       # OpenAI-compatible servers: json_schema (portable) or guided_choice (vLLM, after "")

asks the engine to restrict what the model may write in the slot to what the template's parser reads: its choice
labels (a letter parser), the item's labels (a label parser), a number (a number parser); validation checks that
``holds`` fits the parser. A local transformers model does it
with a logits processor (``babeleval.generate.backends.answer_slot``); an OpenAI-compatible server with a JSON
schema ``response_format`` (``{"reasoning": ..., "answer": ...}``, the answer an enum of the labels or a
number) or vLLM's ``guided_choice``. Where the engine cannot, the run stops before asking the model.

This changes what is measured: a constrained model cannot fail the format, and where it would have written no
answer it is made to pick one. Report constrained and unconstrained templates as different protocols.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import TemplateError

APIS = ("json_schema", "guided_choice")
HOLDS = {"labels": "letter", "choices": "label", "number": "number"}  # what the slot holds -> the parser kind
_KEYS = {"holds", "after", "api"}


@dataclass(frozen=True)
class SlotSpec:
    """A template's ``answer_slot``: what it holds, where it opens and how an API server is asked to constrain it."""

    holds: str = "labels"
    after: str = "####"
    api: str = "json_schema"

    @classmethod
    def from_fields(cls, value: Any, path: Any) -> "SlotSpec | None":
        if value is None:
            return None
        if not isinstance(value, dict) or set(value) - _KEYS:
            raise TemplateError(f"{path}: 'answer_slot' must be a mapping with 'holds' ({', '.join(HOLDS)}), 'after' "
                                f"(the text the answer follows, '' for none) and 'api' ({' or '.join(APIS)})")
        spec = cls(**value)
        if spec.holds not in HOLDS:
            raise TemplateError(f"{path}: answer_slot.holds '{spec.holds}' is not one of {', '.join(HOLDS)}")
        if not isinstance(spec.after, str):
            raise TemplateError(f"{path}: answer_slot.after must be a string ('' : the whole reply is the answer)")
        if spec.api not in APIS:
            raise TemplateError(f"{path}: answer_slot.api '{spec.api}' is not one of {', '.join(APIS)}")
        if spec.api == "guided_choice" and spec.after:
            raise TemplateError(f"{path}: answer_slot.api guided_choice constrains the whole reply, so it needs "
                                "after: '' (use json_schema to let the model reason first)")
        return spec


@dataclass(frozen=True)
class AnswerSlot:
    """One request's slot: it opens after ``after``; it holds one of ``choices``, or a number where ``number``."""

    after: str
    choices: tuple[str, ...] | None = None
    number: bool = False
    api: str = "json_schema"

    def to_json(self) -> dict[str, Any]:
        return {"after": self.after, "choices": list(self.choices) if self.choices is not None else None,
                "number": self.number, "api": self.api}

    @classmethod
    def from_json(cls, value: dict[str, Any] | None) -> "AnswerSlot | None":
        if not value:
            return None
        choices = value.get("choices")
        return cls(value["after"], tuple(choices) if choices is not None else None, bool(value.get("number")),
                   value.get("api", "json_schema"))

    def json_schema(self) -> dict[str, Any]:
        """The ``response_format`` an OpenAI-compatible server is sent: reasoning first, then the answer."""
        answer: dict[str, Any] = {"type": "number"} if self.number else {"type": "string", "enum": list(self.choices or ())}
        properties = {"reasoning": {"type": "string"}, "answer": answer} if self.after else {"answer": answer}
        return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": {
            "type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}}}


def slot_for(spec: SlotSpec | None, labels: list[str], choices: list[str] | None) -> AnswerSlot | None:
    """The slot of one item: its template's spec, filled with the labels shown, the item's own labels, or a number."""
    if spec is None:
        return None
    if spec.holds == "number":
        return AnswerSlot(spec.after, number=True, api=spec.api)
    return AnswerSlot(spec.after, tuple(labels if spec.holds == "labels" else choices or ()), api=spec.api)
