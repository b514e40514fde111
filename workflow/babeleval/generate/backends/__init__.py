"""Model backends behind one interface (see ``base.Backend``).

Backends are imported only when a model selects them, so the rest of the
package never imports torch or transformers.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import BackendError
from .base import Backend


def load_backend(spec: dict[str, Any], model_path: str) -> Backend:
    """Load the backend a model entry of params.yaml names; ``model_path`` is a hub id or local directory."""
    name = spec["backend"]
    if name == "hf":
        try:
            from .hf import HFBackend
        except ImportError as exc:
            raise BackendError(f"backend 'hf' needs torch and transformers ({exc.name} is missing): "
                               "pip install 'babeleval[hf]'") from None
        return HFBackend(spec, model_path)
    if name == "vllm":
        from .vllm import VLLMBackend  # imports vllm itself, with a clear message when it is not installed

        return VLLMBackend(spec, model_path)
    if name == "openai":
        from .openai_api import OpenAIBackend  # standard library only

        return OpenAIBackend(spec, model_path)
    raise BackendError(f"unknown backend '{name}' (known: hf, vllm, openai)")
