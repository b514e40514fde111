"""Provenance in every scores file, and a greedy grid that reruns to byte-identical metrics.

The workflow runs twice from scratch (no response cache, outputs deleted in between) in a
temporary git repository; ``results/metrics.json`` must come out byte for byte the same, and every
scores file must say what produced it. The Snakemake report is built from the finished run.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import copy_workflow, snakemake

TARGETS = ["results/metrics.json", "results/tables/by_template.csv", "results/tables/by_language.csv"]
COMPUTED = ["results", "data/prepared", ".snakemake"]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def reruns(tmp_path_factory, tiny_model_dir, built_tiny_model):
    """A greedy grid (paper: log-likelihood; instruct: greedy generation), cache off, run twice from scratch."""
    workdir = copy_workflow(tmp_path_factory.mktemp("rerun") / "wf", tasks=("belebele",), built=built_tiny_model)
    params = yaml.safe_load((workdir / "params.yaml").read_text(encoding="utf-8"))
    params["models"] = {"tiny-llama": {"backend": "hf", "model": str(tiny_model_dir), "dtype": "float32",
                                       "device": "cpu", "batch_size": 8}}
    params["tasks"]["belebele"].update(languages=["eng_Latn", "jpn_Jpan"], templates=["paper", "instruct"], limit=6)
    params["cache"] = {"enabled": False}
    (workdir / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    (workdir / ".gitignore").write_text("results/\ndata/prepared/\n.snakemake/\n")
    git(workdir, "init", "-q")
    git(workdir, "add", "-A")
    git(workdir, "commit", "-q", "-m", "grid")

    runs = []
    for attempt in range(2):
        for name in COMPUTED:
            shutil.rmtree(workdir / name, ignore_errors=True)
        snakemake(workdir, "--rerun-incomplete", *TARGETS)  # a flag ends --resources' list
        scores = {p.relative_to(workdir).as_posix(): p.read_bytes() for p in sorted((workdir / "results/scores").rglob("*.json"))}
        runs.append({"metrics": (workdir / "results/metrics.json").read_bytes(), "scores": scores,
                     "leaderboard": (workdir / "results/leaderboard.csv").read_bytes()})
    return workdir, runs


def flat(value, path: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        return {key: leaf for name, item in value.items() for key, leaf in flat(item, f"{path}.{name}").items()}
    return {path: value}


def differing_fields(first: dict[str, bytes], second: dict[str, bytes]) -> list[str]:
    """Each scores file's fields that differ between the runs, with both values: what a failure shows."""
    found = []
    for name in sorted(set(first) | set(second)):
        a, b = (flat(json.loads(run[name])) if name in run else {} for run in (first, second))
        found += [f"{name}: {key}: {a.get(key)!r} != {b.get(key)!r}" for key in sorted(set(a) | set(b))
                  if a.get(key) != b.get(key)]
    return found


@pytest.mark.workflow
def test_greedy_rerun_gives_byte_identical_metrics(reruns):
    _, (first, second) = reruns
    assert first["metrics"] == second["metrics"]
    assert first["leaderboard"] == second["leaderboard"]
    # provenance holds nothing time- or run-dependent either: the scores files are identical too
    assert first["scores"] == second["scores"], differing_fields(first["scores"], second["scores"])
    assert not (reruns[0] / "results/cache").exists()


@pytest.mark.workflow
def test_metrics_json_holds_metrics_only(reruns):
    workdir, _ = reruns
    metrics = json.loads((workdir / "results/metrics.json").read_text())
    assert set(metrics["tiny-llama"]) == {"belebele"}
    assert isinstance(metrics["tiny-llama"]["belebele"]["acc"], (int, float))


@pytest.mark.workflow
def test_every_scores_file_says_what_produced_it(reruns, tiny_model_dir):
    workdir, _ = reruns
    files = sorted((workdir / "results/scores").rglob("*.json"))
    assert len(files) == 4
    head = git(workdir, "rev-parse", "HEAD")
    for path in files:
        scores = json.loads(path.read_text())
        prov = scores["provenance"]
        language, template = scores["language"], scores["template"]
        # model: a local directory, identified by its weights
        assert prov["model"]["name"] == "tiny-llama" and prov["model"]["spec"]["model"] == str(tiny_model_dir)
        assert len(prov["model"]["fingerprint"]["weights_sha256"]) == 64
        # dataset: the source and the hash of each file read (the exemplars' language too)
        dataset = prov["dataset"]
        assert dataset["source"] == {"kind": "local", "path": "data/samples/belebele"}
        read = {f"data/samples/belebele/{language}.jsonl"} | ({"data/samples/belebele/eng_Latn.jsonl"}
                                                           if template == "paper" else set())
        assert set(dataset["files_sha256"]) == read
        for name, digest in dataset["files_sha256"].items():
            assert digest == sha256(workdir / name)
        assert f"data/prepared/belebele/{language}.jsonl" in dataset["prepared_sha256"]
        # template content, prompts and generations
        template_file = workdir / f"prompts/belebele/{template}.yaml"
        assert prov["template"]["sha256"] == sha256(template_file) == scores["template_sha256"]
        assert prov["prompts_sha256"] == sha256(workdir / f"results/prompts/belebele/{language}/{template}.jsonl")
        assert prov["generations_sha256"] == sha256(
            workdir / f"results/generations/tiny-llama/belebele/{language}/{template}.jsonl")
        # seed, decoding, packages, code
        assert prov["fewshot_seed"] == 1234
        assert prov["decoding"]["mode"] == ("loglikelihood" if template == "paper" else "generate")
        if template == "instruct":
            assert prov["decoding"]["do_sample"] is False and "max_new_tokens" in prov["decoding"]
        packages = prov["packages"]
        assert packages["babeleval"] and packages["snakemake"] and packages["python"]
        assert "torch" in packages and "transformers" in packages
        assert prov["code"] == {"commit": head, "dirty": False}


@pytest.mark.workflow
def test_snakemake_report_holds_the_leaderboard(reruns, tmp_path):
    workdir, _ = reruns
    report = tmp_path / "report.zip"
    snakemake(workdir, "--rerun-incomplete", *TARGETS, "--report", str(report))
    import zipfile

    with zipfile.ZipFile(report) as archive:
        names = archive.namelist()
        [board] = [n for n in names if n.endswith("/leaderboard.csv")]
        assert archive.read(board) == (workdir / "results/leaderboard.csv").read_bytes()
        assert any(n.endswith("/by_template.csv") for n in names) and any(n.endswith("/by_language.csv") for n in names)
        assert "report/report.html" in names


def test_provenance_outside_git_says_so(tmp_path):
    from babeleval.score import provenance

    provenance.git_state.cache_clear()
    state = provenance.git_state(str(tmp_path))
    assert state["commit"] is None and state["dirty"] is None and "not a git repository" in state["error"]


def test_package_versions_do_not_import_torch():
    code = ("import sys; from babeleval.score import provenance; v = provenance.package_versions(); "
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'imported'; print(v['babeleval'])")
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip()
