"""What the local backends (hf, vllm) share: prompt encoding, chat rendering and stop-sequence cutting.

Both give their model token ids encoded here, so they score and generate from the same tokens. Each request
says how (its template's protocol's ``Encoding``, ``babeleval.prompts.protocols``): lm-evaluation-harness's
joint encoding (trailing whitespace of a context moves to the continuation, a continuation's tokens are those
of ``encode(context + continuation)`` past the context's own tokens; the tokenizer's leading special tokens)
or jp-stable's separate one (each part alone, nothing added). A text that starts with the BOS already gets no
second one, and no EOS is ever appended. A chat model's conversation is rendered with its chat template (the
entry's ``chat_template`` file or the tokenizer's own) and encoded without adding special tokens again, unless
``add_bos_token`` says otherwise.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ...prompts.protocols import JOINT, NONE, Encoding
from . import chat
from .base import GenerationRequest
from .config import LocalConfig


def cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to its first stop sequence, and whether one was found (what a generation returns)."""
    found = [text.index(stop) for stop in stops if stop in text]
    return (text[: min(found)], True) if found else (text, False)


def _with_prefix(ids: list[int], prefix: list[int]) -> list[int]:
    return ids if ids[:len(prefix)] == prefix else prefix + ids


def _texts_to_encode(context: str, continuations: Sequence[str], encoding: Encoding) -> list[str]:
    """What one request puts through the tokenizer: the continuations alone after an empty context; else the
    context (its trailing whitespace cut off for the joint encoding), then each continuation, alone
    (separate) or after the whole context (joint)."""
    if not context:
        return list(continuations)
    if not encoding.joint:
        return [context, *continuations]
    stripped = context.rstrip()
    return [stripped, *(context + cont for cont in continuations)]


class LocalText:
    """Prompt encoding and chat rendering for a backend holding a tokenizer; set up by ``init_text``."""

    tokenizer: Any
    tokenizer_prefix: list[int]  # the tokenizer's own leading special tokens (default_prefix)
    model_path: str
    add_bos: bool | None
    chat_template: str | None
    chat_template_sha256: str | None

    def init_text(self, tokenizer: Any, config: LocalConfig, model_path: str) -> None:
        self.tokenizer = tokenizer
        self.tokenizer_prefix = self.default_prefix()
        self.model_path = model_path
        self.add_bos = config.add_bos_token
        self.chat_template = None
        self.chat_template_sha256 = None
        if config.chat:
            self.chat_template = chat.tokenizer_template(tokenizer, config, model_path)
            self.chat_template_sha256 = chat.sha256_text(self.chat_template)
            if self.add_bos is None:  # a rendered conversation carries the special tokens its template puts in
                self.add_bos = False

    # -- encoding ---------------------------------------------------------------------------------

    def plain(self, texts: list[str]) -> list[list[int]]:
        """Each text's tokens with no special token added (a literal ``<s>`` in the text is still read as one)."""
        return [list(ids) for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]]

    def default_prefix(self) -> list[int]:
        """The special tokens the tokenizer puts before a text by default (its BOS where it adds one); what it
        appends (an EOS) is never used."""
        [plain] = self.plain(["a"])
        full = list(self.tokenizer("a")["input_ids"])
        starts = [k for k in range(len(full) - len(plain) + 1) if full[k:k + len(plain)] == plain]
        return full[:starts[0]] if starts else []

    def prefix(self, encoding: Encoding) -> list[int]:
        """What goes before a prompt: nothing for an encoding that adds nothing (jp-stable); else the BOS as the
        model entry's ``add_bos_token`` says, or the tokenizer's default where it says nothing."""
        if encoding.prefix == NONE:
            return []
        if self.add_bos is None:
            return self.tokenizer_prefix
        bos = self.tokenizer.bos_token_id
        return [bos] if self.add_bos and bos is not None else []

    def encode_all(self, texts: list[str], encoding: Encoding = JOINT) -> list[list[int]]:
        """Each text as the model sees it: the prefix, unless the text starts with it already (a literal
        ``<s>``: one BOS, never two), then the text's own tokens; never an appended EOS."""
        prefix = self.prefix(encoding)
        return [_with_prefix(ids, prefix) for ids in self.plain(texts)]

    def encode(self, text: str, encoding: Encoding = JOINT) -> list[int]:
        return self.encode_all([text], encoding)[0]

    def encode_request(self, context: str, continuations: Sequence[str], encoding: Encoding = JOINT
                       ) -> tuple[list[int], list[list[int]]]:
        """An item's context and each choice's tokens, the shared context encoded once.

        Joint (lm-eval): the context's trailing whitespace moves into the continuation, whose tokens are those
        of the whole text past the context's. Separate (jp-stable): each encoded alone, no special token added.
        An empty context is conditioned on the BOS token (joint; EOS where there is none) or the EOS token
        (separate), as each harness does, the continuation encoded without special tokens.
        """
        return self.encode_requests([(context, continuations, encoding)])[0]

    def encode_requests(self, requests: Sequence[tuple[str, Sequence[str], Encoding]]
                        ) -> list[tuple[list[int], list[list[int]]]]:
        """``encode_request`` for many (context, continuations, encoding) at once: every text goes through the
        tokenizer in one call, since a call costs about a millisecond besides its text (two calls an item were
        2 of the 7 seconds 900 Belebele items took on an H100)."""
        texts: list[str] = []
        for context, continuations, encoding in requests:
            texts += _texts_to_encode(context, continuations, encoding)
        ids = iter(self.plain(texts))
        out = []
        for context, continuations, encoding in requests:
            encoded = [next(ids) for _ in range(len(continuations) + bool(context))]
            out.append(self._request_tokens(context, encoded, encoding))
        return out

    def _request_tokens(self, context: str, encoded: list[list[int]], encoding: Encoding
                        ) -> tuple[list[int], list[list[int]]]:
        """One request's context and continuation tokens from its texts' plain tokens (``_texts_to_encode``)."""
        if not context:
            bos, eos = self.tokenizer.bos_token_id, self.tokenizer.eos_token_id
            start = bos if encoding.joint and bos is not None else eos
            return [start], [cont[1:] if cont and cont[0] == start else cont for cont in encoded]
        prefix = self.prefix(encoding)
        context_ids = _with_prefix(encoded[0], prefix)
        if not encoding.joint:
            return context_ids, encoded[1:]
        return context_ids, [_with_prefix(whole, prefix)[len(context_ids):] for whole in encoded[1:]]

    def encode_pair(self, context: str, continuation: str, encoding: Encoding = JOINT) -> tuple[list[int], list[int]]:
        context_ids, [cont] = self.encode_request(context, [continuation], encoding)
        return context_ids, cont

    def limited(self, requests: Sequence[GenerationRequest]) -> list[GenerationRequest]:
        """Requests whose protocol caps a generation at the longest gold answer's token length (jp-stable
        JSQuAD), with that cap (at most the template's limit, at least one token)."""
        out = []
        for request in requests:
            if request.answer_length_of:
                longest = max(map(len, self.plain(list(request.answer_length_of))))
                request = dataclasses.replace(request, max_new_tokens=max(1, min(request.max_new_tokens, longest)))
            out.append(request)
        return out

    def question_tokens(self, query: str | None) -> int:
        """Tokens the item's own question encodes to (0 when the request does not say which part it is)."""
        return len(self.tokenizer(query, add_special_tokens=False)["input_ids"]) if query else 0

    # -- chat -------------------------------------------------------------------------------------

    def render_chat(self, messages: Sequence[dict[str, str]] | None, plain: str) -> str:
        """The text the model sees: the conversation through the chat template for a chat model, else ``plain``."""
        if self.chat_template is None:
            return plain
        if messages is None:
            messages = [{"role": "user", "content": plain}]
        return chat.render(self.tokenizer, self.chat_template, list(messages), self.model_path)

    def rendered_prompt(self, text: str) -> str | None:
        """What a result records as the prompt the model saw: the rendered conversation of a chat model."""
        return text if self.chat_template is not None else None
