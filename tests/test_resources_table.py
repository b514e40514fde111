"""workflow/resources.yaml: what each kind of job asks for, capped at one node; a bad table is a named error."""

from __future__ import annotations

import pytest
import yaml

from babeleval.grid import resources
from babeleval.core.errors import ConfigError
from conftest import ROOT

TABLE = ROOT / "workflow/resources.yaml"


def test_the_shipped_table_covers_every_kind():
    table = resources.load(TABLE)
    assert set(table) == set(resources.KINDS) | {"generation_job"}
    assert resources.generation_job(table) in resources.GENERATION_JOBS
    gpu = resources.for_job(table, "generate_gpu", "belebele")
    assert gpu["cpus_per_gpu"] >= 1 and gpu["mem_mb"] >= 1 and gpu["runtime"] >= 1
    assert "cpus_per_gpu" not in resources.for_job(table, "generate_api", "belebele")


def test_per_task_entries_override_the_default_key_by_key():
    table = {"generate_gpu": {"default": {"cpus_per_gpu": 8, "mem_mb": 64000, "runtime": 240},
                              "mgsm": {"runtime": 720}}}
    assert resources.for_job(table, "generate_gpu", "mgsm") == {"cpus_per_gpu": 8, "mem_mb": 64000, "runtime": 720}
    assert resources.for_job(table, "generate_gpu", "belebele")["runtime"] == 240


def test_every_request_is_capped_at_one_node():
    table = {"generate_gpu": {"default": {"cpus_per_gpu": 8, "mem_mb": 64000, "runtime": 240}},
             "cpu": {"threads": 4, "mem_mb": 2000, "runtime": 10}}
    assert resources.for_job(table, "generate_gpu", "jnli", max_cores=2, max_mem_mb=22000) == \
        {"cpus_per_gpu": 2, "mem_mb": 22000, "runtime": 240}
    assert resources.for_job(table, "cpu", max_cores=2, max_mem_mb=22000) == {"threads": 2, "mem_mb": 2000,
                                                                              "runtime": 10}


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


@pytest.mark.parametrize("entry, message", [
    ({"mem_gb": 4}, "cpu.mem_gb: unknown key"),
    ({"mem_mb": "4G"}, "cpu.mem_mb: must be a whole number >= 1, got '4G'"),
    ({"runtime": 0}, "cpu.runtime: must be a whole number >= 1, got 0"),
    ({"mem_mb": True}, "cpu.mem_mb: must be a whole number >= 1, got True"),
])
def test_a_bad_value_names_its_key(tmp_path, entry, message):
    table = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    table["cpu"] = entry
    path = tmp_path / "resources.yaml"
    path.write_text(yaml.safe_dump(table), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        resources.load(path)
    assert message in str(caught.value)
