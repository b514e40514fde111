"""bench/gpu.sh, the GPU benchmark in one command, checked on the CPU with a tiny model (``--cpu-check``): the
JSON and Markdown it writes, with lm-eval's comparison measured where lm-eval imports and skipped, with the
reason, where it does not. Not timed: the figures of a CPU check mean nothing."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import gpu_bench  # noqa: E402

pytestmark = pytest.mark.bench

MC = ("mc_ours_texts", "mc_ours_letters")
RATE = {"items", "batch_size", "first_batch_s", "seconds", "items_per_s", "positions_run", "positions_per_s",
        "tflops", "fraction_of_measured_matmul", "fraction_of_peak", "meets_goal", "forward_s", "forward_tflops"}


def gpu_sh(out, *args):
    env = {**os.environ, "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(ROOT / "bench" / "gpu.sh"), "--cpu-check", "--out", str(out), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads((out / "gpu_bench.json").read_text())
    table = (out / "gpu_bench.md").read_text()
    assert table in proc.stdout  # printed as well
    return report, table


def lmeval_importable() -> bool:
    site = ROOT / "bench" / ".gpu-site"  # where bench/gpu.sh installs brought wheels
    probe = "import lm_eval.models.huggingface"
    env = {**os.environ, "PYTHONPATH": f"{site}:{ROOT / 'workflow'}"}
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True).returncode == 0


def test_cpu_check_writes_the_json_and_the_table(tmp_path):
    report, table = gpu_sh(tmp_path)
    assert {"device", "date", "load_average", "torch", "transformers", "lm_eval", "model_shape", "dtype", "items",
            "steps", "lmeval_over_ours", "total_s"} <= report.keys()
    steps = report["steps"]
    assert steps["matmul"]["measured_tflops"] > 0 and steps["matmul"]["published_peak_tflops"] is None  # a CPU
    assert steps["model"]["parameters_billion"] > 0 and steps["model"]["ours_load_s"] >= 0
    for name in MC:
        assert RATE <= steps[name].keys() and steps[name]["items"] == report["items"]
        assert steps[name]["positions_run"] > 0 and steps[name]["tflops"] > 0
        assert steps[name]["fraction_of_peak"] is None and steps[name]["meets_goal"] is None  # no published peak
        assert f"| {name} | {steps[name]['batch_size']} |" in table
    gen = steps["generation"]
    assert gen["output_tokens"] > 0 and gen["output_tokens_per_s"] > 0 and gen["first_batch_s"] > 0
    published = gen["vllm_published"]["output_tokens_per_s"]
    assert gen["ours_over_vllm_published"] == round(gen["output_tokens_per_s"] / published, 3)
    assert "Generation:" in table and "vLLM's published" in table
    for name in ("mc_vllm_texts", "mc_vllm_letters", "generation_vllm"):
        assert report["skipped"][name] == "vLLM runs on a CUDA GPU only"

    for choices in ("texts", "letters"):
        name = f"mc_lmeval_{choices}"
        if lmeval_importable():  # lm-eval's HF path measured beside ours, on the same strings
            assert RATE <= steps[name].keys()
            assert steps[name]["largest_logprob_difference_from_ours"] < 1e-4
            assert steps[name]["same_argmax_as_ours"] == f"{report['items']} / {report['items']}"
            assert report["lmeval_over_ours"][choices] > 0 and f"| {name} |" in table
        else:  # said, with the reason, in both files
            assert name not in steps and "not importable" in report["skipped"][name]
            assert f"- skipped {name}: lm-eval is not importable" in table


def test_log_probs_kept_and_generation_left_out_on_request(tmp_path):
    report, table = gpu_sh(tmp_path, "--gen-prompts", "0", "--save-logprobs")
    assert "generation" not in report["steps"]
    assert report["skipped"]["generation"] == "not asked for (--gen-prompts 0)"
    for name in ("ours_texts", "ours_letters"):
        assert len(report["logprobs"][name]) == report["items"]
        assert all(len(choices) == 4 for choices in report["logprobs"][name])
    assert report["dtype"] == "float32" and report["torch_compile"] is False


@pytest.mark.slow
def test_prefill_settings_side_by_side(tmp_path):
    """bench/gpu_prefill.py on the CPU: eager and compiled passes, each with its figures, compared."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "workflow")}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_prefill.py"), "--cpu-check", "--out",
                           str(tmp_path), "--configs", "eager:4", "compiled:4", "--repeats", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads((tmp_path / "gpu_prefill.json").read_text())
    for mode in ("eager", "compiled"):
        for choices in ("texts", "letters"):
            assert RATE <= report["steps"][f"{mode}_b4_{choices}_r0"].keys()
    for choices in ("texts", "letters"):
        agreement = report["agreement"][f"compiled_b4_{choices} vs eager_b4_{choices}"]
        assert agreement["largest_logprob_difference"] < 1e-4 and agreement["same_argmax"] == "12 / 12"
    assert (tmp_path / "gpu_prefill.md").read_text() in proc.stdout


def test_a_spent_budget_skips_steps_and_says_so(tmp_path):
    report, table = gpu_sh(tmp_path, "--budget-s", "0")
    assert report["steps"] == {}
    assert set(report["skipped"]) == {"matmul", "model", "generation", *MC, "mc_lmeval_texts", "mc_lmeval_letters",
                                      "mc_vllm_texts", "mc_vllm_letters", "generation_vllm"}
    assert report["skipped"]["matmul"].startswith("time budget spent")
    assert "- skipped mc_ours_texts: no model" in table


@pytest.mark.parametrize("name, peak", [("NVIDIA H100 80GB HBM3", 989.0), ("NVIDIA H100 PCIe", 756.0),
                                        ("NVIDIA H100 NVL", 835.0), ("NVIDIA H200", 989.0),
                                        ("NVIDIA A100-SXM4-80GB", 312.0), ("NVIDIA L40S", 362.0),
                                        ("NVIDIA L4", 121.0), ("Tesla T4", None)])
def test_published_peak_by_device_name(name, peak):
    assert gpu_bench.published_peak(name) == peak
