"""The interface every backend implements, and the records it exchanges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from ...prompts.answer_slot import AnswerSlot
from ...prompts.protocols import JOINT, Encoding


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Score each continuation after the shared context."""
    context: str
    continuations: tuple[str, ...]
    messages: tuple[dict[str, str], ...] | None = None  # chat models: the conversation the context stands for
    query: str | None = None  # the item's own part at the end of the context (after the exemplars)
    encoding: Encoding = JOINT  # how local backends make its tokens: its template's protocol's


@dataclass(frozen=True)
class LoglikelihoodResult:
    logprobs: list[float]          # summed log-probability of each continuation
    greedy: list[bool]             # whether each continuation is the greedy decode
    n_tokens: list[int]            # tokens in each continuation
    n_context_tokens: int
    rendered_prompt: str | None = None  # chat models rendered locally: the exact text the model saw
    truncated_tokens: int = 0      # context tokens cut from the left to fit the model (see keep_last)
    question_cut: bool = False     # the cut reached the item's own question
    server: dict[str, str] | None = None  # API models: what the server's reply said it is (server_change)


@dataclass(frozen=True)
class GenerationRequest:
    prompt: str
    max_new_tokens: int
    stop: tuple[str, ...] = ()
    messages: tuple[dict[str, str], ...] | None = None  # chat models: the conversation the prompt stands for
    query: str | None = None  # the item's own part at the end of the prompt (after the exemplars)
    encoding: Encoding = JOINT  # how local backends make its tokens: its template's protocol's
    # texts whose longest token length caps max_new_tokens for a local backend (jp-stable JSQuAD: the gold answers)
    answer_length_of: tuple[str, ...] = ()
    answer_slot: AnswerSlot | None = None  # constrained answers (a template's answer_slot), else free text


@dataclass(frozen=True)
class GenerationResult:
    text: str                      # the response, cut at the first stop sequence
    n_prompt_tokens: int
    n_completion_tokens: int
    finish_reason: str             # "stop" (stop sequence or end of text) or "length"
    rendered_prompt: str | None = None  # chat models rendered locally: the exact text the model saw
    truncated_tokens: int = 0      # prompt tokens cut from the left to fit the model (see keep_last)
    question_cut: bool = False     # the cut reached the item's own question
    server: dict[str, str] | None = None  # API models: what the server's reply said it is (server_change)


def keep_last(ids: list[int], budget: int, question_tokens: Callable[[], int]) -> tuple[list[int], int, bool]:
    """A prompt cut from the left to its last ``budget`` tokens, how many were cut, and whether the cut reached
    the question.

    Local backends cut a prompt longer than the model's context from the left, as lm-eval does, so the
    exemplars go first; the record says so. The question counts as cut when fewer tokens are kept than it
    encodes to on its own (``question_tokens``, called only when something is cut): then the model never saw
    what it is scored on.
    """
    budget = max(budget, 1)
    cut = max(0, len(ids) - budget)
    if not cut:
        return ids, 0, False
    kept = ids[-budget:]
    return kept, cut, len(kept) < question_tokens()


@dataclass(frozen=True)
class Decoding:
    """Decoding settings: a preset from params.yaml plus the seed sampled decoding derives from."""
    do_sample: bool = False
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    repetition_penalty: float | None = None
    seed: int = 0


class Backend(Protocol):
    """What generate.run needs. A backend may also offer

    - ``iter_loglikelihood(requests)`` / ``iter_generate(requests, decoding)``: yield ``(index, result)`` as each
      request finishes, in any order, so the job can put finished results in the cache at once (API backends:
      a killed job loses only what was in flight);
    - ``chat_template_sha256``: the SHA-256 of the chat template it renders conversations with;
    - ``usage()``: counters for the job's usage file (HTTP calls, retries);
    - ``constrains_answers = True``: it honours a request's ``answer_slot`` (a backend without it is refused such
      requests before any is sent).
    """

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]: ...

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding) -> list[GenerationResult]: ...
