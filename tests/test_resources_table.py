"""workflow/resources.yaml and the model: what each job asks for, capped at the run's; a bad table or override is
a named error."""

from __future__ import annotations

import re

import pytest
import yaml

from babeleval.core.errors import ConfigError
from babeleval.generate.backends import model_config
from babeleval.generate.tiny_model import PARAMS_B
from babeleval.grid import resources
from conftest import ROOT, SHIPPED, copy_workflow, snakemake

TABLE = ROOT / "workflow/resources.yaml"
WHERE = "params.yaml: models.m.resources"


def shipped():
    return resources.load(TABLE)


def request(entry, task="belebele", task_overrides=None, **caps):
    return resources.for_generation(shipped(), model_config(entry), task, model_where=WHERE,
                                    task_overrides=task_overrides, task_where="params.yaml: tasks.t.resources",
                                    **caps)


def test_the_shipped_table_covers_every_kind():
    table = shipped()
    assert set(table) == set(resources.KINDS) | {"generation_job"}
    assert resources.generation_job(table) in resources.GENERATION_JOBS
    gpu = request({"backend": "hf", "model": "org/m"})
    assert gpu["gpu"] == 1 and gpu["cpus_per_gpu"] >= 1 and gpu["mem_mb"] >= 1 and gpu["runtime"] >= 1
    api = request({"backend": "openai", "model": "m", "base_url": "http://x/v1"})
    assert api["gpu"] == 0 and "cpus_per_gpu" not in api and api["threads"] >= 1


def test_a_model_of_unknown_size_gets_the_default_and_the_tasks_entry_key_by_key():
    table = shipped()
    default = table["generate_gpu"]["default"]
    assert request({"backend": "hf", "model": "org/m"}) == {"gpu": 1, **default}
    assert request({"backend": "hf", "model": "org/m"}, task="mgsm") == {"gpu": 1, **default, "runtime": 720}


def test_gpus_come_from_tensor_parallel_size_and_a_cpu_model_asks_for_none():
    assert request({"backend": "vllm", "model": "org/m", "tensor_parallel_size": 4})["gpu"] == 4
    assert request({"backend": "vllm", "model": "org/m"})["gpu"] == 1
    cpu = request({"backend": "hf", "model": "org/m", "device": "cpu"})
    assert cpu == {"gpu": 0, **shipped()["generate_cpu"]["default"]}


def test_memory_and_time_grow_with_the_parameter_count_where_it_is_known():
    size = shipped()["model_size"]
    small = request({"backend": "hf", "model": "org/m", "params_b": 1})
    big = request({"backend": "vllm", "model": "org/m", "params_b": 70})
    big_split = request({"backend": "vllm", "model": "org/m", "params_b": 70, "tensor_parallel_size": 4})
    # 1B: the 32 GB besides the weights shrink to an eighth (4000), plus the weights' 4000
    assert small["mem_mb"] == size["mem_mb_base"] / 8 + size["mem_mb_per_params_b"] == 8000 < big["mem_mb"] == 312000
    assert small["runtime"] == 60 and big["runtime"] == 2100  # 1/8 and 70/8 times the table's 240 (at least 60)
    assert big_split["runtime"] == 525 and big_split["gpu"] == 4  # four GPUs share the work
    assert request({"backend": "hf", "model": "org/m", "params_b": 8})["mem_mb"] == \
        shipped()["generate_gpu"]["default"]["mem_mb"]  # the default entry is written for an 8B model
    builtin = request({"backend": "hf", "builtin": "tiny-llama"})
    assert builtin["mem_mb"] == resources.sized_mem_mb(size, PARAMS_B) and builtin["runtime"] == 60


def test_the_builtin_cpu_model_asks_slurm_for_what_a_2_layer_model_needs():
    """Not the 8B default's 64 GB, 8 CPUs and 8 hours: the floors of the table's model_size."""
    size = shipped()["model_size"]
    job = request({"backend": "hf", "builtin": "tiny-llama", "device": "cpu"})
    assert job == {"gpu": 0, "threads": size["threads_min"], "mem_mb": resources.sized_mem_mb(size, PARAMS_B),
                   "runtime": size["runtime_min"]}
    assert job["mem_mb"] < 4100 and job["threads"] == 2 and job["runtime"] == 60
    # a CPU model of the reference size keeps the table's entry
    assert request({"backend": "hf", "model": "org/m", "params_b": 8, "device": "cpu"}) == \
        {"gpu": 0, **shipped()["generate_cpu"]["default"]}


def test_the_builtin_models_size_is_what_it_is_built_with():
    from transformers import LlamaConfig, LlamaForCausalLM

    import torch
    with torch.device("meta"):  # the architecture build() writes, without allocating weights
        model = LlamaForCausalLM(LlamaConfig(vocab_size=2048, hidden_size=64, intermediate_size=128,
                                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                             tie_word_embeddings=False))
    count = sum(p.numel() for p in model.parameters())
    assert abs(count / 1e9 - PARAMS_B) / PARAMS_B < 0.1, count


def test_a_task_entry_overrides_the_table_and_a_model_entry_overrides_both():
    entry = {"backend": "hf", "model": "org/m", "params_b": 70}
    assert request(entry, task_overrides={"runtime": 30, "mem_mb": 1000}) == {
        "gpu": 1, "cpus_per_gpu": 8, "mem_mb": 1000, "runtime": 30}
    assert request({**entry, "resources": {"runtime": 99, "gpus": 2}}, task_overrides={"runtime": 30}) == {
        "gpu": 2, "cpus_per_gpu": 8, "mem_mb": 312000, "runtime": 99}


def test_every_request_is_capped_at_the_runs_cores_and_memory():
    assert request({"backend": "hf", "model": "org/m"}, task="jnli", max_cores=2, max_mem_mb=22000) == \
        {"gpu": 1, "cpus_per_gpu": 2, "mem_mb": 22000, "runtime": 240}
    table = {"cpu": {"threads": 4, "mem_mb": 2000, "runtime": 10}}
    assert resources.for_job(table, "cpu", max_cores=2, max_mem_mb=22000) == {"threads": 2, "mem_mb": 2000,
                                                                              "runtime": 10}


@pytest.mark.parametrize("entry, task_overrides, message", [
    ({"backend": "openai", "model": "m", "base_url": "http://x/v1", "resources": {"gpus": 1}}, None,
     f"{WHERE}.gpus: this model runs without a GPU (an API model); remove the key"),
    ({"backend": "hf", "model": "m", "device": "cpu", "resources": {"gpus": 2}}, None,
     f"{WHERE}.gpus: this model runs without a GPU (device: cpu or a CPU backend)"),
    ({"backend": "hf", "model": "m", "resources": {"mem_gb": 4}}, None, f"{WHERE}.mem_gb: unknown key"),
    ({"backend": "hf", "model": "m"}, {"gpus": 2}, "tasks.t.resources.gpus: unknown key; allowed: threads"),
    ({"backend": "hf", "model": "m"}, {"runtime": "2h"}, "tasks.t.resources.runtime: must be a whole number"),
])
def test_a_bad_override_names_the_entry_and_key(entry, task_overrides, message):
    with pytest.raises(ConfigError) as caught:
        request(entry, task_overrides=task_overrides)
    assert message in str(caught.value)


@pytest.mark.parametrize("text, message", [
    ("cpu: {threads: 1}\n", "missing 'build_model'"),
    ("gpu_jobs: {}\n", "unknown kind 'gpu_jobs'"),
    ("generation_job: language\n", "generation_job: 'language' is not one of template, task"),
])
def test_a_bad_table_names_the_file_and_key(tmp_path, text, message):
    path = tmp_path / "resources.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        resources.load(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


@pytest.mark.parametrize("kind, entry, message", [
    ("cpu", {"mem_gb": 4}, "cpu.mem_gb: unknown key"),
    ("cpu", {"mem_mb": "4G"}, "cpu.mem_mb: must be a whole number >= 1, got '4G'"),
    ("cpu", {"runtime": 0}, "cpu.runtime: must be a whole number >= 1, got 0"),
    ("cpu", {"mem_mb": True}, "cpu.mem_mb: must be a whole number >= 1, got True"),
    ("model_size", {"mem_mb_base": 1}, "model_size: expected exactly mem_mb_base, mem_mb_min, mem_mb_per_params_b"),
    ("model_size", {"reference_params_b": 0, "mem_mb_base": 1, "mem_mb_per_params_b": 1, "mem_mb_min": 1,
                    "runtime_min": 1, "threads_min": 1},
     "model_size.reference_params_b: must be a number > 0, got 0"),
])
def test_a_bad_value_names_its_key(tmp_path, kind, entry, message):
    table = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    table[kind] = entry
    path = tmp_path / "resources.yaml"
    path.write_text(yaml.safe_dump(table), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        resources.load(path)
    assert message in str(caught.value)


@pytest.mark.workflow
def test_the_workflow_asks_for_what_the_model_needs_and_a_bad_override_stops_planning(tmp_path):
    """Snakemake's own plan: a model with two GPUs and its size, a task's runtime; a GPU override on the
    CPU-only default model stops the run while it is planned."""
    workdir = copy_workflow(tmp_path / "wf", tasks=("belebele",), generation_job=SHIPPED)  # a job per template
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["models"]["big"] = {"backend": "hf", "builtin": "tiny-llama", "params_b": 70,
                               "resources": {"gpus": 2}}
    params["tasks"]["belebele"]["resources"] = {"runtime": 30}
    (workdir / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    proc = snakemake(workdir, "-n", "results/generations/big/belebele/eng_Latn/paper.jsonl",
                     "results/generations/tiny-llama/belebele/eng_Latn/paper.jsonl", "--resources", "gpu=2")
    plans = re.findall(r"wildcards: model=(\S+), template=paper\n\s+(?:threads: \d+\n\s+)?resources: ([^\n]+)",
                       proc.stdout)
    resources_of = {model: dict(item.split("=", 1) for item in text.split(", ")) for model, text in plans}
    assert {k: resources_of["big"][k] for k in ("gpu", "mem_mb", "runtime")} == \
        {"gpu": "2", "mem_mb": "312000", "runtime": "30"}  # the task's runtime over the size-derived one
    assert resources_of["tiny-llama"]["gpu"] == "0"  # device: cpu

    params["models"]["tiny-llama"]["resources"] = {"gpus": 1}
    (workdir / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    proc = snakemake(workdir, "-n", check=False)
    assert proc.returncode != 0
    assert "params.yaml: models.tiny-llama.resources.gpus: this model runs without a GPU (device: cpu or a CPU " \
        "backend); remove the key" in proc.stdout + proc.stderr
