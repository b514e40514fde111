"""bench/mc_loglikelihood.py writes, per item in file order, the log-probs a per-choice computation gives;
bench/startup.py splits the fixed cost by stage; bench/linear_kernels.py compares the linear layers' two kernels."""

import importlib.util
import json
import subprocess
import sys

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from conftest import ROOT, SAMPLES

pytestmark = pytest.mark.bench


def load(name):
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_choice(model, tokenizer, context, continuation):
    """lm-eval's recipe: trailing context spaces move to the continuation; one full pass per choice."""
    ctx = tokenizer(context)["input_ids"]
    cont = tokenizer(context + continuation)["input_ids"][len(ctx):]
    with torch.no_grad():
        logprobs = torch.log_softmax(model(input_ids=torch.tensor([ctx + cont])).logits[0].float(), dim=-1)
    return sum(logprobs[len(ctx) - 1 + j, tok].item() for j, tok in enumerate(cont))


@pytest.mark.parametrize("choices", ["texts", "letters"])
def test_mc_loglikelihood_matches_per_choice_scoring(tiny_model_dir, tmp_path, choices):
    rows = [json.loads(line) for line in (SAMPLES / "belebele" / "eng_Latn.jsonl").read_text().splitlines()[:5]]
    rows += [json.loads(line) for line in (SAMPLES / "belebele" / "jpn_Jpan.jsonl").read_text().splitlines()[:3]]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    load("mc_loglikelihood").main(["--model", str(tiny_model_dir), "--data", str(data), "--choices", choices,
                                   "--out", str(out), "--batch-size", "3"])
    prompts = load("belebele_prompts")
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [w["id"] for w in written] == [f"{r['link']}#{r['question_number']}" for r in rows]

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    for row, record in zip(rows, written):
        context = prompts.context(row, choices)
        expected = [per_choice(model, tokenizer, context, c) for c in prompts.continuations(row, choices)]
        assert len(record["logprobs"]) == 4
        assert record["logprobs"] == pytest.approx(expected, abs=1e-4)

    compare = load("compare_mc")
    assert compare.main([str(out), str(out)]) == 0


@pytest.mark.parametrize("collector", ["paused", "on"])
def test_startup_splits_the_fixed_cost_by_stage(tiny_model_dir, collector):
    """bench/startup.py in a fresh process: every stage timed, the pause's end only when the collector was paused."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "startup.py"), "--model", str(tiny_model_dir),
                           "--collector", collector], capture_output=True, text=True, check=True)
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["model_class"] == "LlamaForCausalLM"
    stages = list(report["stages"])
    assert stages[0] == "import torch" and "load the weights" in stages
    assert (stages[-1] == "collect once and freeze what survives (the pause's end)") == (collector == "paused")
    assert all(s["wall_s"] >= 0 and s["cpu_s"] >= 0 for s in report["stages"].values())


def test_linear_kernels_compares_onednn_with_torchs_matmul(tiny_model_dir, capsys):
    """bench/linear_kernels.py: both ways give the same scores and texts, and every measurement is reported."""
    load("linear_kernels").main(["--model", str(tiny_model_dir), "--data", str(SAMPLES / "belebele" / "eng_Latn.jsonl"),
                                 "--limit", "4", "--prompts", "2", "--max-new-tokens", "4", "--repeats", "1"])
    report = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert report["linear_layers"] > 0 and len(report["products"]) == 5
    assert all(p["torch_gflops"] > 0 and p["onednn_gflops"] > 0 for p in report["products"].values())
    for choices in ("texts", "letters"):
        assert report[choices]["items"] == 4 and report[choices]["largest_logprob_difference"] < 1e-4
        assert len(report[choices]["onednn_s"]) == len(report[choices]["torch_s"]) == 1
    assert report["generation"]["same_texts"] == report["generation"]["prompts"] == 2
