"""What the local backends (hf, vllm) share: prompt encoding, chat rendering and stop-sequence cutting.

Both give their model token ids encoded here, so they score and generate from the same tokens.
Tokenisation follows lm-evaluation-harness: trailing whitespace of a context moves to the continuation, and a
continuation's tokens are those of ``encode(context + continuation)`` past the context's own tokens. A chat
model's conversation is rendered with its chat template (the entry's ``chat_template`` file or the
tokenizer's own) and encoded without adding special tokens again, unless ``add_bos_token`` says otherwise.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import chat
from .config import LocalConfig


def cut_at_stop(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to its first stop sequence, and whether one was found (what a generation returns)."""
    found = [text.index(stop) for stop in stops if stop in text]
    return (text[: min(found)], True) if found else (text, False)


class LocalText:
    """Prompt encoding and chat rendering for a backend holding a tokenizer; set up by ``init_text``."""

    tokenizer: Any
    model_path: str
    add_bos: bool | None
    chat_template: str | None
    chat_template_sha256: str | None

    def init_text(self, tokenizer: Any, config: LocalConfig, model_path: str) -> None:
        self.tokenizer = tokenizer
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

    def encode(self, text: str) -> list[int]:
        if self.add_bos is None:
            return list(self.tokenizer(text)["input_ids"])
        ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        bos = self.tokenizer.bos_token_id
        return [bos, *ids] if self.add_bos and bos is not None else ids

    def encode_many(self, texts: list[str], special: bool = True) -> list[list[int]]:
        """``encode`` for several texts in one tokenizer call (``special=False``: no special tokens at all)."""
        if not special:
            return self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        if self.add_bos is None:
            return self.tokenizer(texts)["input_ids"]
        bos = self.tokenizer.bos_token_id
        ids = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [[bos, *row] if self.add_bos and bos is not None else row for row in ids]

    def encode_request(self, context: str, continuations: Sequence[str]) -> tuple[list[int], list[list[int]]]:
        """``encode_pair`` for all choices of one item, encoding the shared context once.

        An empty context is conditioned on the BOS token (EOS when there is none), with the continuation
        encoded without special tokens, as lm-eval does.
        """
        if not context:
            bos = self.tokenizer.bos_token_id
            prefix = bos if bos is not None else self.tokenizer.eos_token_id
            conts = []
            for cont in self.encode_many(list(continuations), special=False):
                conts.append(cont[1:] if cont and cont[0] == prefix else cont)
            return [prefix], conts
        spaces = len(context) - len(context.rstrip())
        trail = context[-spaces:] if spaces else ""
        context = context[:-spaces] if spaces else context
        context_ids = self.encode(context)
        wholes = self.encode_many([context + trail + cont for cont in continuations])
        return context_ids, [whole[len(context_ids):] for whole in wholes]

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        context_ids, [cont] = self.encode_request(context, [continuation])
        return context_ids, cont

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
