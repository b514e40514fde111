"""lm-evaluation-harness generate_until tasks (AfriMGSM, MMLU-ProX Lite) as babeleval tasks: lm-eval's prompts and
generation settings byte for byte, its filters and exact_match giving babeleval's scores, a reply the filters cannot
read a named parse failure, and the real instruct model's replies read the same way.

Needs the `lmeval` extra (lm-eval 0.4); skipped where it is not installed. The documents are our own fixtures in each
dataset's layout (data/samples/lmeval/afrimgsm, data/samples/lmeval/mmlu_prox_lite), never fetched data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from babeleval.core.errors import ConfigError
from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template
from babeleval.tasks import get_task, lmeval
from resolved_record import prompt_record_for

pytest.importorskip("lm_eval")

from test_lmeval_tasks import registry_as_it_was  # noqa: E402, F401 - autouse: lm-eval entries a test registers go

ROOT = Path(__file__).resolve().parents[1]
LMEVAL_SAMPLES = ROOT / "data" / "samples" / "lmeval"

# (lm-eval task, fixture folder, grid language, replies by the gold: right, wrong, unreadable by the headline filter)
CASES = [
    ("afrimgsm_yor_prompt_1", "afrimgsm", "yor_Latn"),
    ("afrimgsm_swa_prompt_1", "afrimgsm", "swa_Latn"),
    ("mmlu_prox_lite_ja_math", "mmlu_prox_lite", "jpn_Jpan"),
    # several references per document (lm-eval's multiple_target), no configs: <path>/<split>.jsonl
    ("nq_open", str(ROOT / "tests" / "data" / "lmeval" / "nq_open"), "eng_Latn"),
]


def source_of(folder: str) -> dict:
    return {"kind": "local", "path": str(LMEVAL_SAMPLES / folder)}  # an absolute folder stays itself


def ours(spec: str, folder: str, language: str) -> tuple[list[dict], object]:
    """babeleval's requests for the task's documents, and its template."""
    name = f"lm_{spec}"
    lmeval.register({name: {"lmeval": spec}})
    items = get_task(name).load(source_of(folder), language)
    template = load_template(name, spec)
    plan = prompt_record_for(name, language, spec).fewshot
    return build_requests(template, items, items, fewshot=plan, seed=0), template


def lm_eval_run(spec: str, folder: str, reply=None) -> tuple[list[tuple[str, dict]], dict]:
    """lm-eval's own evaluator on the task's documents: what it asks a model (context, generation_kwargs), and,
    with ``reply(context) -> text``, its results (per filter pipeline) and per-document samples."""
    from lm_eval import evaluator
    from lm_eval.api.model import LM

    from babeleval.tasks import lmeval_catalogue as catalogue

    class Scripted(LM):
        asked: list[tuple[str, dict]] = []

        def loglikelihood(self, requests):
            raise AssertionError("not asked")

        def loglikelihood_rolling(self, requests):
            raise AssertionError("not asked")

        def generate_until(self, requests):
            self.asked += [request.args for request in requests]
            return [reply(request.args[0]) if reply else "" for request in requests]

    [leaf] = catalogue.expand(spec, "test")
    config = {**leaf.resolved_config(), **lmeval.dataset_overrides(leaf, source_of(folder), ".")}
    model = Scripted()
    out = evaluator.simple_evaluate(model=model, tasks=[config], task_manager=catalogue.task_manager(),
                                    log_samples=True, bootstrap_iters=0)
    return model.asked, out


@pytest.mark.parametrize("spec, folder, language", CASES)
def test_prompts_and_generation_settings_are_lm_evals_byte_for_byte(spec, folder, language):
    requests, template = ours(spec, folder, language)
    asked, _ = lm_eval_run(spec, folder)
    assert len(requests) == len(asked) > 0
    assert sorted(request["prompt"] for request in requests) == sorted(context for context, _ in asked)
    kwargs = {repr(sorted(k.items())) for _, k in asked}
    assert len(kwargs) == 1  # one set for the task, which the one template carries
    [(_, gen_kwargs)] = {repr(sorted(k.items())): (None, k) for _, k in asked}.values()
    assert template.mode == "generate" and template.generation.decoding == "greedy"
    assert not gen_kwargs.get("do_sample") and not gen_kwargs.get("temperature")
    assert template.generation.stop == tuple(gen_kwargs["until"])
    assert template.generation.max_new_tokens == gen_kwargs.get("max_gen_toks", 256)  # HFLM's default where unset


KINDS = ("right", "wrong", "unreadable")


def scripted_reply(spec: str, kind: str, gold: str) -> str:
    """A reply of ``kind`` to a document whose reference is ``gold``, in the task's own answer phrase."""
    if spec == "nq_open":  # read whole (remove_whitespace), articles and case ignored: any of the references
        return {"right": f" {gold[-1].upper()}", "wrong": " Paris", "unreadable": " "}[kind]
    if spec.startswith("mmlu_prox"):  # its regex: 答えは (X) です
        return {"right": f"段階的に考えます。答えは ({gold}) です。", "wrong": "答えは (J) です。",
                "unreadable": "わかりません。"}[kind]
    phrase, unsure = {"yor": ("Ìdáhùn náà ni", "Mi ò mọ̀."), "swa": ("Jibu ni", "Sijui.")}[spec.split("_")[1]]
    # "bare": the number alone, which the remove_whitespace pipeline reads as well as flexible-extract
    return {"right": f"{phrase} {gold}.", "wrong": f"{phrase} {int(gold) + 1}", "unreadable": unsure,
            "bare": f" {gold}\n"}[kind]


@pytest.mark.parametrize("spec, folder, language", CASES)
def test_lm_evals_filters_and_exact_match_give_babelevals_scores(spec, folder, language):
    """Scripted replies (a right one, a wrong one, an unreadable one, then right ones) scored by lm-eval's own
    evaluator and by babeleval: the same value per item and filter pipeline, the same mean per pipeline; the
    unreadable reply a named parse failure of the headline pipeline."""
    from babeleval.score.job import score_combination
    from babeleval.tasks import lmeval_catalogue as catalogue

    requests, template = ours(spec, folder, language)
    golds = {request["prompt"]: request["answer"] for request in requests}
    # the first documents (in prompt order) get a right, a wrong and an unreadable reply; the others the bare answer
    # (AfriMGSM) or a right one (MMLU-ProX)
    rest = "bare" if spec.startswith("afrimgsm") else "right"
    kinds = {prompt: KINDS[order] if order < len(KINDS) else rest for order, prompt in enumerate(sorted(golds))}

    def reply(context: str) -> str:
        return scripted_reply(spec, kinds[context], golds[context])

    _, out = lm_eval_run(spec, folder, reply)
    leaf = get_task(f"lm_{spec}").leaves(language)[0]
    records = [{**request, "response": reply(request["prompt"])} for request in requests]
    names = catalogue.plan(spec, [language], "test").metrics
    scored, metrics, _ = score_combination(records, template, "lmeval_generate", {}, names)

    theirs = out["results"][spec]
    for pipeline in leaf.pipelines:
        assert metrics[f"exact_match,{pipeline}"] == theirs[f"exact_match,{pipeline}"]
    samples = {(sample["doc_id"], sample["filter"]): sample for sample in out["samples"][spec]}
    for record in scored:
        doc_id = int(record["id"].rsplit("#", 1)[1])
        for pipeline in leaf.pipelines:
            sample = samples[doc_id, pipeline]
            assert record[f"exact_match,{pipeline}"] == sample["exact_match"]
            assert record["lmeval_filters"][pipeline]["answer"] == sample["filtered_resps"][0]
    by_kind = {kind: [r for request, r in zip(requests, scored) if kinds[request["prompt"]] == kind] for kind in KINDS}
    assert all(r["correct"] and r["parsed"] for r in by_kind["right"])
    bare = [r for request, r in zip(requests, scored) if kinds[request["prompt"]] == "bare"]
    assert all(r["correct"] and all(r[f"exact_match,{p}"] == 1.0 for p in leaf.pipelines) for r in bare)
    [wrong], [unreadable] = by_kind["wrong"], by_kind["unreadable"]
    assert wrong["parsed"] and not wrong["correct"]
    assert not unreadable["parsed"] and not unreadable["correct"] and unreadable["prediction"] is None
    # a regex that found nothing gave its fallback; a pipeline without one (nq_open) fails only on an empty reply
    named = "empty response" if spec == "nq_open" else "no answer: lm-eval filter RegexFilter"
    assert unreadable["parse_error"].startswith(named)
    assert metrics["parse_failure_rate"] == pytest.approx(1 / len(records))
    print(f"{spec}: {len(records)} items x {len(leaf.pipelines)} pipelines equal lm-eval's; "
          + ", ".join(f"{name} {value:.3f}" for name, value in metrics.items()))


def test_each_filter_pipeline_is_a_metric_and_one_is_the_headline():
    from babeleval.grid.resolve import metric_entries
    from babeleval.score.metrics import get_metric
    from babeleval.tasks import lmeval_catalogue as catalogue

    plan = catalogue.plan("afrimgsm_yor_prompt_1", ["yor_Latn"], "tasks.afrimgsm.lmeval")
    assert plan.family == "lmeval_generate"
    assert plan.metrics == ("exact_match,remove_whitespace", "exact_match,flexible-extract", "parse_failure_rate")
    entries = {entry.name: entry for entry in metric_entries(plan.metrics)}
    assert [name for name, entry in entries.items() if entry.headline] == ["exact_match,flexible-extract"]
    metric = get_metric("exact_match,flexible-extract")
    assert metric.higher_is_better and metric.right_or_wrong and metric.percent
    mmlu = catalogue.plan("mmlu_prox_lite_ja", ["jpn_Jpan"], "tasks.mmlu_prox.lmeval")
    assert len(mmlu.leaves["jpn_Jpan"]) == 14 and mmlu.metrics == ("exact_match,custom-extract", "parse_failure_rate")


GRID = """
seed: 1234
models:
  smollm2:
    backend: hf
    builtin: smollm2-135m-instruct
    dtype: float32
    device: cpu
    max_new_tokens: 64
tasks:
  afrimgsm:
    lmeval: afrimgsm_yor_prompt_1
    languages: [yor_Latn]
    templates: [afrimgsm_yor_prompt_1]
    source: {kind: local, path: data/samples/lmeval/afrimgsm}
  mmlu_prox:
    lmeval: mmlu_prox_lite_ja_math
    languages: [jpn_Jpan]
    templates: [mmlu_prox_lite_ja_math]
    source: {kind: local, path: data/samples/lmeval/mmlu_prox_lite}
decoding:
  greedy:
    do_sample: false
"""


def test_a_grid_resolves_their_generation_settings_and_metrics_before_any_job(tmp_path):
    from babeleval.grid.params import load_params

    (tmp_path / "params.yaml").write_text(GRID, encoding="utf-8")
    grid = load_params(tmp_path / "params.yaml", root=ROOT)
    records = {record.task: record for record in grid.records.values()}
    afrimgsm, mmlu = records["afrimgsm"], records["mmlu_prox"]
    assert afrimgsm.family == mmlu.family == "lmeval_generate" and afrimgsm.mode == "generate"
    assert afrimgsm.decoding["stop"] == ["Question:", "</s>", "<|im_end|>"]
    assert mmlu.decoding["stop"] == ["</s>", "Q:", "質問：", "<|im_end|>"]
    assert afrimgsm.decoding["max_new_tokens"] == mmlu.decoding["max_new_tokens"] == 64  # the model's cap
    assert not afrimgsm.decoding.get("do_sample")
    assert [(m.name, m.headline) for m in mmlu.metrics] == [("exact_match,custom-extract", True),
                                                           ("parse_failure_rate", False)]
    (tmp_path / "params.yaml").write_text(GRID.replace("  greedy:\n    do_sample: false", "  sampled:\n    do_sample: true"),
                                          encoding="utf-8")
    with pytest.raises(ConfigError, match="decoding preset 'greedy' is not defined"):
        load_params(tmp_path / "params.yaml", root=ROOT)
    hub = "{kind: hf, dataset: masakhane/afrimgsm}"  # the hub, its revision not pinned
    (tmp_path / "params.yaml").write_text(GRID.replace("{kind: local, path: data/samples/lmeval/afrimgsm}", hub),
                                          encoding="utf-8")
    with pytest.raises(ConfigError, match="tasks.afrimgsm.source: .*source.revision must pin"):
        load_params(tmp_path / "params.yaml", root=ROOT)


@pytest.mark.parametrize("spec, reason", [
    ("gsm8k_cot_self_consistency", "repeats"),
    ("gpqa_main_generative_n_shot", "reads the document.s choices"),
])
def test_generate_until_tasks_that_need_what_babeleval_cannot_give_stay_refused(spec, reason):
    from babeleval.tasks import lmeval_catalogue as catalogue

    with pytest.raises(ConfigError, match=reason):
        catalogue.plan(spec, ["eng_Latn"], "tasks.x.lmeval")


@pytest.mark.slow
def test_the_real_instruct_models_replies_are_read_by_lm_evals_filters(smollm2_dir):
    """SmolLM2-135M-Instruct answers AfriMGSM (Swahili) and MMLU-ProX Lite (Japanese) with lm-eval's prompts and
    stop strings; each reply is read by the task's filters: an answer or a named failure, never a guess."""
    from babeleval.generate.backends import load_backend
    from babeleval.generate.backends.base import Decoding, GenerationRequest
    from babeleval.score.job import score_combination
    from babeleval.tasks import lmeval_catalogue as catalogue

    backend = load_backend({"backend": "hf", "model": str(smollm2_dir), "dtype": "float32", "device": "cpu",
                            "batch_size": 4}, str(smollm2_dir))
    for spec, folder, language in (CASES[1], CASES[2]):
        requests, template = ours(spec, folder, language)
        requests = requests[:2]
        results = backend.generate([GenerationRequest(r["prompt"], 48, stop=template.generation.stop)
                                    for r in requests], Decoding(do_sample=False))
        records = [{**r, "response": result.text, "finish_reason": result.finish_reason}
                   for r, result in zip(requests, results)]
        names = catalogue.plan(spec, [language], "test").metrics
        scored, metrics, _ = score_combination(records, template, "lmeval_generate", {}, names)
        for record in scored:
            assert record["parsed"] == (record["parse_error"] is None)
            assert record["parsed"] or record["parse_error"].split(":")[0] in ("no answer", "empty response")
            assert not any(stop in record["response"] for stop in template.generation.stop)
        if spec.startswith("mmlu_prox"):  # five exemplars: it ends with the task's 答えは (X) です, which is read
            assert all(record["parsed"] and record["prediction"] in "ABCDEFGHIJ" for record in scored)
        else:  # zero-shot Swahili: it writes no number, which flexible-extract cannot read: failures, not wrong answers
            assert any(record["parse_error"] and "found nothing" in record["parse_error"] for record in scored)
        print(spec, [record["response"][:80] for record in scored], metrics)


def test_scoring_a_generated_answer_imports_neither_torch_nor_transformers():
    """The scoring job (CPU) builds lm-eval's filters and its exact_match, never a model library."""
    import subprocess
    import sys

    code = ("import sys\nfrom babeleval.tasks import get_task, lmeval\n"
            "from babeleval.prompts.templates import load_template\nfrom babeleval.prompts.render import build_requests\n"
            "from babeleval.score.job import score_combination\n"
            "lmeval.register({'afrimgsm': {'lmeval': 'afrimgsm_yor_prompt_1'}})\n"
            f"items = get_task('afrimgsm').load({source_of('afrimgsm')!r}, 'yor_Latn')\n"
            "template = load_template('afrimgsm', 'afrimgsm_yor_prompt_1')\n"
            "requests = build_requests(template, items, items, fewshot=template.fewshot, seed=0)\n"
            "records = [{**r, 'response': 'Ìdáhùn náà ni 5.'} for r in requests]\n"
            "metrics = score_combination(records, template, 'lmeval_generate', {}, ("
            "'exact_match,flexible-extract', 'parse_failure_rate'))[1]\n"
            "assert metrics['exact_match,flexible-extract'] == 0.25, metrics\n"
            "heavy = [m for m in ('torch', 'transformers') if m in sys.modules]\nassert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
