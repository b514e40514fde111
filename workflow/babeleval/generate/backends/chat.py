"""Chat models: the messages a request becomes, and their rendering with a tokenizer's chat template.

A model entry with ``chat: true`` sees each request as a conversation instead of
plain text:

- an optional system prompt (``system_prompt``);
- with ``fewshot_as_turns: true``, each few-shot exemplar as an earlier
  (user, assistant) exchange, then the item's own prompt as the last user turn
  (a template's ``preamble``, when the request has one, opens the first user
  turn); otherwise one user turn holding the plain-text prompt, exemplars inline.

The messages are built here, in the job, from the structured parts that
``render.build_requests`` keeps beside the plain prompt (``exemplar_turns``,
``query``), and they are what the response cache keys on for a chat model.
Formatting them is the backend's business: hf and vllm render them with the
tokenizer's chat template (``apply_chat_template``), the openai backend sends
them to a chat endpoint as they are. The template's SHA-256 is recorded with
every result, so a changed template shows in the records.

This module never imports torch or transformers.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ...core.errors import BackendError
from .config import LocalConfig, ModelConfig

Message = dict[str, str]


def build_messages(request: dict[str, Any], config: ModelConfig) -> list[Message]:
    """The conversation for one rendered request under a model's chat settings."""
    messages: list[Message] = []
    system = config.system_prompt
    if system:
        messages.append({"role": "system", "content": system})
    exemplars = request.get("exemplar_ids") or []
    if config.fewshot_as_turns and exemplars:
        turns = request.get("exemplar_turns")
        if turns is None or "query" not in request:
            raise BackendError(
                f"request {request.get('id')!r} has no exemplar_turns/query fields (prompts rendered by an older "
                "version): render the prompts again, e.g. snakemake --forcerun render_prompts")
        # a template's preamble (an instruction before the exemplars) opens the first user turn
        preamble = request.get("preamble") or ""
        for turn in turns:
            messages.append({"role": "user", "content": (preamble + turn["user"]).strip()})
            messages.append({"role": "assistant", "content": turn["assistant"].strip()})
            preamble = ""
        messages.append({"role": "user", "content": (preamble + request["query"]).strip()})
    else:
        messages.append({"role": "user", "content": request["prompt"].strip()})
    return messages


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def template_override(config: LocalConfig) -> str | None:
    """The Jinja chat template a model entry names in ``chat_template`` (a file), read as text; None if none."""
    path = config.chat_template
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BackendError(f"chat_template {path}: cannot read it ({exc.strerror})") from None


def tokenizer_template(tokenizer: Any, config: LocalConfig, model_path: str) -> str:
    """The chat template that renders this model's conversations: the entry's override or the tokenizer's own."""
    override = template_override(config)
    if override is not None:
        return override
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):  # several named templates: the default one renders conversations
        template = template.get("default")
    if not template:
        raise BackendError(
            f"model {model_path} is marked chat: true but its tokenizer has no chat template; give one with "
            "chat_template: <path to a Jinja file> in its params.yaml entry, or set chat: false")
    return template


def render(tokenizer: Any, template: str, messages: list[Message], model_path: str) -> str:
    """The exact text a chat model sees, up to where the assistant's reply starts."""
    try:
        return tokenizer.apply_chat_template(messages, chat_template=template, tokenize=False,
                                             add_generation_prompt=True)
    except Exception as exc:  # jinja2 raises TemplateError, templates raise their own messages
        roles = ", ".join(m["role"] for m in messages)
        raise BackendError(f"model {model_path}: its chat template rejected a conversation ({roles}): {exc}"
                           " (a template without a system role needs system_prompt unset)") from None
