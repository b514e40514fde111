"""Metrics over scored items. Small, explicit and pure, each with the name it is reported under."""

from __future__ import annotations

from typing import Sequence


def argmax(values: Sequence[float]) -> int:
    """Index of the largest value; the first one on ties, as lm-evaluation-harness does."""
    return max(range(len(values)), key=lambda i: (values[i], -i))


def accuracy(correct: Sequence[bool]) -> float:
    return sum(correct) / len(correct) if correct else float("nan")


def length_normalised(logprobs: Sequence[float], continuations: Sequence[str]) -> list[float]:
    """Log-likelihood per character of the continuation (lm-eval's and JGLUE's ``acc_norm``)."""
    return [lp / max(1, len(text)) for lp, text in zip(logprobs, continuations)]
