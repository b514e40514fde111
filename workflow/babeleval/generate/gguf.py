"""GGUF files as a model source: read once into a float copy that every later job loads.

transformers reads a GGUF file (``from_pretrained(folder, gguf_file=...)``, with the pure-Python ``gguf``
package) and dequantizes it to float, which takes far longer than loading a saved float checkpoint, and the
loaded model refuses ``save_pretrained``. So the workflow converts a GGUF file once (rule ``convert_gguf``, or
``build_builtin_model`` for a builtin model shipped as GGUF) into a float folder under ``results/models/``, with
``gguf_source.json`` beside the weights: the file's name, SHA-256 and quantization type. The model's fingerprint
and provenance carry those (``source_of``).

What transformers cannot read is found while the run is planned (``check``), from the file's header: a missing
file, ``gguf`` not installed, an architecture transformers has no GGUF mapping for, a tensor type the ``gguf``
package cannot dequantize.

Importing this module imports neither torch nor transformers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError, MachineError

log = logging.getLogger(__name__)

SUFFIX = ".gguf"
SOURCE_FILE = "gguf_source.json"
# Tensor types a GGUF file stores unquantized: every gguf version reads them.
PLAIN_TYPES = frozenset({"F32", "F16", "BF16"})


@dataclass(frozen=True)
class GGUFHeader:
    """What a GGUF file says of itself: the facts that decide whether transformers can read it."""
    path: Path
    architecture: str
    quantization: str  # the file type, e.g. MOSTLY_Q4_1 (llama.cpp's name for the whole file's quantization)
    tensor_types: frozenset[str]
    has_chat_template: bool  # tokenizer.chat_template in its metadata: what a chat model's conversations need


def _gguf_package(needed_for: str) -> Any:
    try:
        import gguf
    except ImportError:
        raise MachineError(f"{needed_for}: reading GGUF files needs the 'gguf' package (and 'accelerate' to load "
                           "them): pip install 'babeleval[hf]', or pip install gguf accelerate") from None
    return gguf


def read_header(path: str | Path, where: str) -> GGUFHeader:
    """The header of a GGUF file; ``where`` names the params.yaml key that gave the file, for the errors."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{where}: the GGUF file {path} does not exist")
    gguf = _gguf_package(where)
    try:
        reader = gguf.GGUFReader(str(path))
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{where}: {path} is not a readable GGUF file ({exc})") from None
    field = reader.fields.get("general.architecture")
    if field is None:
        raise ConfigError(f"{where}: {path} has no general.architecture in its header: not a model GGUF file")
    file_type = reader.fields.get("general.file_type")
    try:
        quantization = gguf.LlamaFileType(int(file_type.contents())).name if file_type is not None else "unknown"
    except ValueError:
        quantization = f"file type {file_type.contents()}"
    return GGUFHeader(path, str(field.contents()), quantization,
                      frozenset(tensor.tensor_type.name for tensor in reader.tensors),
                      "tokenizer.chat_template" in reader.fields)


def unreadable(header: GGUFHeader) -> str | None:
    """Why transformers cannot load this file into a float model, or None where it can."""
    gguf = _gguf_package(str(header.path))
    # transformers maps GGUF metadata to its configs per architecture (integrations/ggml.py); a missing entry is
    # its "GGUF model with architecture ... is not supported yet" after the whole file was read
    from transformers.integrations.ggml import GGUF_CONFIG_MAPPING

    if header.architecture not in GGUF_CONFIG_MAPPING and header.architecture.replace("-", "_") not in GGUF_CONFIG_MAPPING:
        return (f"architecture {header.architecture!r} has no GGUF mapping in transformers (it reads: "
                f"{', '.join(sorted(GGUF_CONFIG_MAPPING))}); convert the original checkpoint instead, or update "
                "transformers")
    # the gguf package dequantizes the types it has a kernel for (gguf.quants); others raise NotImplementedError
    readable = PLAIN_TYPES | {t.name for t in getattr(gguf.quants, "_type_traits", {})}
    missing = sorted(header.tensor_types - readable)
    if missing:
        return (f"tensor types {', '.join(missing)} (file type {header.quantization}) cannot be dequantized by the "
                f"installed gguf package; use a file of another quantization, or update gguf")
    return None


def check(path: str | Path, where: str) -> GGUFHeader:
    """Stop the run at start-up where transformers could not read the file; returns its header."""
    header = read_header(path, where)
    reason = unreadable(header)
    if reason:
        raise ConfigError(f"{where}: {header.path}: {reason}")
    return header


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(2**24), b""):
            h.update(block)
    return h.hexdigest()


def convert(gguf_file: str | Path, out_dir: str | Path) -> Path:
    """Dequantize a GGUF file into a float32 folder (config, weights, tokenizer with its chat template) and
    ``gguf_source.json``; written to a temporary folder beside ``out_dir`` and renamed, so a killed conversion
    leaves no folder that looks complete."""
    gguf_file, out_dir = Path(gguf_file), Path(out_dir)
    header = check(gguf_file, str(gguf_file))
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_file.parent), gguf_file.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    # the loaded model is marked quantized and refuses save_pretrained: its float weights go into a plain model
    config_dict = loaded.config.to_dict()
    config_dict.pop("quantization_config", None)
    config_dict.pop("_model_name_or_path", None)
    config = AutoConfig.for_model(**config_dict)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        model.save_pretrained(scratch)
        tokenizer.save_pretrained(scratch)
        source = {"file": name, "sha256": file_sha256(gguf_file), "quantization": header.quantization,
                  "architecture": header.architecture, "dtype": "float32"}
        (scratch / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(scratch, out_dir)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    log.info("converted %s (%s, %s) into %s", gguf_file, header.architecture, header.quantization, out_dir)
    return out_dir


def source_of(model_dir: str | Path) -> dict[str, Any] | None:
    """The GGUF file a converted folder was made from (name, sha256, quantization), or None for other folders."""
    file = Path(model_dir) / SOURCE_FILE
    if not file.is_file():
        return None
    return json.loads(file.read_text(encoding="utf-8"))
