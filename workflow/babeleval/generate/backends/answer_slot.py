"""Constrained answers for a local transformers model: a logits processor that, once a row has written its
answer slot's opening text (``####``; at once where the slot opens the reply), admits only the tokens of an
answer, then the end of text.

An answer of choices is one of the token sequences the choices encode to, with and without a leading space
(``" B"``, ``"B"``); a number is a sign or a space first if any, then up to ``NUMBER_TOKENS`` tokens of digits
and separators, then the end once a digit is written. Before the slot opens the model writes freely (its reasoning). What a template's slot
holds: ``babeleval.prompts.answer_slot``.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import torch

from ...prompts.answer_slot import AnswerSlot

NUMBER_TOKENS = 12
# Tokens a number may be written with: one that opens it (a space, a sign, or both, digits may follow), and one
# that goes on with it (digits and separators only).
_OPENING_PIECE = re.compile(r"^ ?[-−]?[0-9.,]*$")
_DIGITS_PIECE = re.compile(r"^[0-9.,]+$")
# How many of a row's last tokens are decoded to see whether it has just written the slot's opening text.
_TAIL = 8


class _Row:
    """One row's slot: where it opened (a position in the row's new tokens) and what may follow."""

    def __init__(self, slot: AnswerSlot, tokenizer: Any, eos: int, number_ids: tuple[list[int], list[int]] | None):
        self.slot, self.tokenizer, self.eos = slot, tokenizer, eos
        self.opened: int | None = 0 if not slot.after else None
        self.sequences = [] if slot.number else sorted({
            tuple(tokenizer.encode(text, add_special_tokens=False))
            for choice in slot.choices or () for text in (choice, " " + choice)})
        self.number_ids = number_ids

    def allowed(self, new: list[int]) -> list[int] | None:
        """The tokens this row may write next; None while its slot has not opened."""
        if self.opened is None:
            if not self.tokenizer.decode(new[-_TAIL:], skip_special_tokens=True).rstrip().endswith(self.slot.after):
                return None
            self.opened = len(new)
        written = tuple(new[self.opened:])
        if self.slot.number:
            assert self.number_ids is not None
            opening, going_on = self.number_ids
            digits = any(ch.isdigit() for ch in self.tokenizer.decode(list(written)))
            if len(written) >= NUMBER_TOKENS:
                return [self.eos]
            return (going_on if written else opening) + ([self.eos] if digits else [])
        if written in self.sequences:
            return [self.eos]
        n = len(written)
        following = {seq[n] for seq in self.sequences if len(seq) > n and seq[:n] == written}
        return sorted(following) or [self.eos]


class AnswerSlotProcessor:
    """A transformers logits processor over a batch: row ``i`` follows ``slots[i]`` (None: unconstrained). Its
    inputs are the prompt (``width`` tokens, left-padded) and the tokens generated so far."""

    def __init__(self, slots: Sequence[AnswerSlot | None], tokenizer: Any, width: int, eos: int):
        numbers = number_token_ids(tokenizer) if any(s is not None and s.number for s in slots) else None
        self.rows = [_Row(slot, tokenizer, eos, numbers) if slot is not None else None for slot in slots]
        self.width = width

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        for index, row in enumerate(self.rows):
            if row is None:
                continue
            allowed = row.allowed(input_ids[index, self.width:].tolist())
            if allowed is not None:
                keep = scores[index, allowed].clone()
                scores[index] = float("-inf")
                scores[index, allowed] = keep
        return scores


_NUMBER_IDS: dict[int, tuple[list[int], list[int]]] = {}


def number_token_ids(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The vocabulary's tokens that may open a number, and those that may go on with one (worked out once per
    tokenizer: a pass over its vocabulary)."""
    key = id(tokenizer)
    if key not in _NUMBER_IDS:
        pieces = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
        _NUMBER_IDS[key] = ([i for i, piece in enumerate(pieces) if piece.strip() and _OPENING_PIECE.match(piece)],
                            [i for i, piece in enumerate(pieces) if _DIGITS_PIECE.match(piece)])
    return _NUMBER_IDS[key]
