"""Mistakes caught while the run is planned, in-process: a model that is neither a local folder nor in the local hub
cache, a language code that is not FLORES-200, a ``--resources`` name no job holds."""

from __future__ import annotations

import time

import pytest
import yaml

from babeleval.core.errors import ConfigError
from babeleval.grid.language_codes import probable_codes
from babeleval.grid.model_sources import check_model_sources
from babeleval.grid.params import validate
from babeleval.grid.resource_names import unused_resources


@pytest.fixture
def params(repo_root):
    return yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))


def grid_with_model(params, repo_root, model):
    params["models"]["mine"] = {"backend": "hf", "model": model, "device": "cpu"}
    return validate(params, root=repo_root)


def test_a_relative_path_without_dot_that_is_nowhere_is_refused_at_once(params, repo_root, tmp_path):
    grid = grid_with_model(params, repo_root, "checkpoints/tiny-c")
    environ = {"HF_HUB_CACHE": str(tmp_path / "hub")}
    started = time.perf_counter()
    with pytest.raises(ConfigError) as caught:
        check_model_sources(grid, repo_root, environ)
    # nothing is asked of the hub, so nothing is retried (the retries took 55 s; room for a busy machine)
    assert time.perf_counter() - started < 10.0
    assert str(caught.value) == (
        f"params.yaml: models.mine.model: 'checkpoints/tiny-c' is neither a local folder nor in the local hub cache "
        f"({tmp_path / 'hub'}): for a folder, check the path and write it as ./checkpoints/tiny-c (a path starting "
        "with '.', '/' or '~' names a local model); for a hub model, download it first (huggingface-cli download "
        "checkpoints/tiny-c) where there is a network")
    # the same with the hub switched off: refused the same way, before any job
    with pytest.raises(ConfigError, match="neither a local folder nor in the local hub cache"):
        check_model_sources(grid, repo_root, {**environ, "HF_HUB_OFFLINE": "1"})


def test_offline_the_planning_check_gives_the_dot_hint_too(params, repo_root, tmp_path, monkeypatch):
    from babeleval.core.errors import MachineError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(MachineError, match=r"for a local folder, write it as \./checkpoints/tiny-c"):
        grid_with_model(params, repo_root, "checkpoints/tiny-c")


def test_a_folder_a_gguf_file_and_a_cached_hub_id_are_accepted(params, repo_root, tmp_path):
    (tmp_path / "checkpoints/tiny-c").mkdir(parents=True)
    (tmp_path / "models").mkdir()
    (tmp_path / "models/small.Q4_1.gguf").write_bytes(b"GGUF")
    (tmp_path / "hub/models--org--cached/snapshots/0123abc").mkdir(parents=True)
    environ = {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    # validation looks for a GGUF file where the run is (the repository here): the one made here, by its full path
    for model in ("checkpoints/tiny-c", str(tmp_path / "models/small.Q4_1.gguf"), "org/cached"):
        check_model_sources(grid_with_model(dict(params, models=dict(params["models"])), repo_root, model),
                            tmp_path, environ)
    with pytest.raises(ConfigError, match="'org/not-cached' is neither a local folder"):
        check_model_sources(grid_with_model(params, repo_root, "org/not-cached"), tmp_path, environ)


def test_a_short_language_code_is_refused_with_the_code_it_probably_means(params, repo_root):
    params["tasks"]["belebele"]["languages"] = ["eng_Latn", "hi"]
    with pytest.raises(ConfigError) as caught:
        validate(params, root=repo_root)
    assert str(caught.value) == ("params.yaml: tasks.belebele.languages: 'hi' is not a FLORES-200 language code (did "
                                 "you mean hin_Deva?); datasets with short codes are read through the FLORES-200 code")


@pytest.mark.parametrize("code,meant", [("hi", ["hin_Deva"]), ("hin", ["hin_Deva"]), ("HIN_deva", ["hin_Deva"]),
                                        ("jpn_Japn", ["jpn_Jpan"]), ("ja", ["jpn_Jpan"]),
                                        ("zh", ["cmn_Hans", "zho_Hans"]), ("qq", [])])
def test_probable_codes(code, meant):
    assert probable_codes(code) == meant


def test_an_unknown_code_gets_the_shape_of_one(params, repo_root):
    params["tasks"]["translation_to"]["partner"] = "english"
    with pytest.raises(ConfigError, match=r"tasks\.translation_to\.partner: 'english' is not a FLORES-200 language "
                                          r"code \(write it as the ISO 639-3 code, an underscore and the ISO 15924 "
                                          r"script, e\.g\. hin_Deva\)"):
        validate(params, root=repo_root)


def test_an_unused_resource_name_is_warned_about_with_the_one_it_probably_means():
    used = {"_cores", "_nodes", "tmpdir", "gpu", "mem_mb", "runtime", "api_127_0_0_1_8000"}
    assert unused_resources({"_cores": 2, "_nodes": 1, "gpu": 1, "mem_mb": 8000}, used) == []
    [line] = unused_resources({"_cores": 2, "gpu": 1, "api_127_0_0_1": 4}, used)
    assert line == ("warning: --resources api_127_0_0_1: no job of this run holds 'api_127_0_0_1', so it limits "
                    "nothing (did you mean api_127_0_0_1_8000? the resources its jobs hold: api_127_0_0_1_8000, gpu, "
                    "mem_mb, runtime)")
    [line] = unused_resources({"gpus": 2}, used)
    assert "did you mean gpu?" in line
