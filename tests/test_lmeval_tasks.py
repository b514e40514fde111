"""lm-evaluation-harness tasks as a task family source (babeleval.tasks.lmeval): lm-eval's own rendering, byte for
byte; Belebele through lm-eval against babeleval's own `paper` template; groups, refusals and the grid entry.

Needs the `lmeval` extra (lm-eval 0.4); skipped where it is not installed. The documents are our own fixtures in
each dataset's layout (data/samples/lmeval/), never fetched data.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from babeleval.core.errors import ConfigError
from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template
from babeleval.tasks import TASKS, get_task, lmeval
from resolved_record import prompt_record_for

pytest.importorskip("lm_eval")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"
LMEVAL_SAMPLES = SAMPLES / "lmeval"


@pytest.fixture(autouse=True)
def registry_as_it_was():
    """lm-eval entries registered by a test (as validation registers a grid's) leave the registry afterwards."""
    before = dict(TASKS)
    yield
    TASKS.clear()
    TASKS.update(before)


@pytest.fixture(scope="module")
def belebele_folder(tmp_path_factory) -> Path:
    """The bundled Belebele sample in the hub repository's layout (``<config>/test.jsonl``)."""
    folder = tmp_path_factory.mktemp("belebele")
    for language in ("eng_Latn", "jpn_Jpan"):
        (folder / language).mkdir()
        shutil.copy(SAMPLES / "belebele" / f"{language}.jsonl", folder / language / "test.jsonl")
    return folder


def lm_eval_requests(task_name: str, overrides: dict) -> list[tuple[str, str]]:
    """What lm-eval's own evaluator asks a model for the task's documents: (context, continuation) pairs in its
    request order, recorded by a model that answers nothing."""
    from lm_eval import evaluator
    from lm_eval.api.model import LM

    from babeleval.tasks import lmeval_catalogue as catalogue

    class Recorder(LM):
        asked: list[tuple[str, str]] = []

        def loglikelihood(self, requests):
            self.asked += [request.args for request in requests]
            return [(0.0, False)] * len(requests)

        def loglikelihood_rolling(self, requests):
            raise AssertionError("not asked")

        def generate_until(self, requests):
            raise AssertionError("not asked")

    [leaf] = catalogue.expand(task_name, "test")
    config = {**leaf.resolved_config(), **overrides}
    model = Recorder()
    evaluator.simple_evaluate(model=model, tasks=[config], task_manager=catalogue.task_manager(),
                              log_samples=False, bootstrap_iters=0)
    return model.asked


def babeleval_requests(name: str, spec: str, source: dict, language: str) -> list[dict]:
    lmeval.register({name: {"lmeval": spec}})
    items = get_task(name).load(source, language)
    plan = prompt_record_for(name, language, spec).fewshot
    return build_requests(load_template(name, spec), items, items, fewshot=plan, seed=0)


@pytest.mark.parametrize("spec, folder, language", [
    ("belebele_jpn_Jpan", None, "jpn_Jpan"),
    ("include_base_44_japanese_medical_license", "include", "jpn_Jpan"),
    ("global_piqa_nonparallel_cloze_jpn_jpan", "global_piqa", "jpn_Jpan"),
    ("afrimmlu_direct_yor_prompt_1", "afrimmlu", "yor_Latn"),
    ("afrixnli_yor_prompt_1", "afrixnli", "yor_Latn"),
])
def test_prompts_are_lm_evals_byte_for_byte(spec, folder, language, belebele_folder):
    path = belebele_folder if folder is None else LMEVAL_SAMPLES / folder
    source = {"kind": "local", "path": str(path)}
    ours = babeleval_requests(f"lm_{spec}", spec, source, language)
    from babeleval.tasks import lmeval_catalogue as catalogue

    [leaf] = catalogue.expand(spec, "test")
    theirs = lm_eval_requests(spec, lmeval.dataset_overrides(leaf, source, "."))
    asked = [(request["prompt"], continuation) for request in ours for continuation in request["continuations"]]
    assert len(asked) == len(theirs) > 0
    assert sorted(asked) == sorted(theirs)  # lm-eval reorders requests by length; the pairs are the same bytes


def test_belebele_through_lm_eval_asks_what_the_paper_template_asks_zero_shot(belebele_folder, tiny_model_dir):
    """Belebele through lm-eval and babeleval's `paper` template (five-shot in the paper; lm-eval's task is
    zero-shot, so the paper's exemplars are taken off here): the same prompts, continuations and encoding, and
    so the same per-item log-likelihoods from the same model."""
    from babeleval.generate.backends.base import LoglikelihoodRequest
    from babeleval.generate.backends.config import HFConfig
    from babeleval.generate.backends.hf import HFBackend
    from babeleval.tasks.belebele import Belebele

    source = {"kind": "local", "path": str(belebele_folder)}
    through_lmeval = babeleval_requests("lm_belebele", "belebele_eng_Latn", source, "eng_Latn")
    paper = load_template("belebele", "paper")
    paper = dataclasses.replace(paper, fewshot=dataclasses.replace(paper.fewshot, n=0))
    items = Belebele().load({"kind": "local", "path": str(SAMPLES / "belebele")}, "eng_Latn")
    own = build_requests(paper, items, items, fewshot=paper.fewshot, seed=0)
    assert len(own) == len(through_lmeval) == 24
    keys = ("prompt", "continuations", "answer")  # choices: the texts in ours, the letters scored in lm-eval's
    assert [[r[k] for k in keys] for r in own] == [[r[k] for k in keys] for r in through_lmeval]
    assert paper.protocol == load_template("lm_belebele", "belebele_eng_Latn").protocol

    backend = HFBackend(HFConfig(builtin="tiny-llama", dtype="float32", device="cpu", batch_size=8),
                        str(tiny_model_dir))
    scored = [backend.loglikelihood([LoglikelihoodRequest(r["prompt"], tuple(r["continuations"]))
                                     for r in requests]) for requests in (own, through_lmeval)]
    same = sum(a.logprobs == b.logprobs for a, b in zip(*scored))
    assert same == 24


def test_a_per_language_group_gives_each_grid_language_its_member():
    from babeleval.tasks import lmeval_catalogue as catalogue

    piqa = catalogue.plan("global_piqa_nonparallel_cloze", ["jpn_Jpan", "yor_Latn"], "tasks.global_piqa.lmeval")
    assert {language: [leaf.name for leaf in leaves] for language, leaves in piqa.leaves.items()} == {
        "jpn_Jpan": ["global_piqa_nonparallel_cloze_jpn_jpan"], "yor_Latn": ["global_piqa_nonparallel_cloze_yor_latn"]}
    assert piqa.metrics == ("acc", "acc_norm")  # acc_bytes: named at start-up, not reported
    assert list(piqa.unsupported) == ["acc_bytes"]
    with pytest.raises(ConfigError, match="language 'som_Latn': lm-eval 'global_piqa_nonparallel_cloze' has none of its"):
        catalogue.plan("global_piqa_nonparallel_cloze", ["jpn_Jpan", "som_Latn"], "tasks.global_piqa.lmeval")


def test_a_group_that_is_one_languages_gives_that_language_its_tasks():
    from babeleval.tasks import lmeval_catalogue as catalogue

    include = catalogue.plan("include_base_44_japanese", ["jpn_Jpan"], "tasks.include.lmeval")
    assert [leaf.name for leaf in include.leaves["jpn_Jpan"]] == [
        "include_base_44_japanese_driving_license", "include_base_44_japanese_medical_license",
        "include_base_44_japanese_professional_certification"]
    assert include.family == "multiple_choice" and include.metrics == ("acc",)
    with pytest.raises(ConfigError, match="it is one language's: list one grid language"):
        catalogue.plan("include_base_44_japanese", ["jpn_Jpan", "eng_Latn"], "tasks.include.lmeval")


@pytest.mark.parametrize("spec, reason", [  # generate_until tasks that stay refused: tests/test_lmeval_generate.py
    ("humaneval", "executes generated code"),
    ("wikitext", "output_type loglikelihood_rolling"),
    ("squadv2", "Python class"),
])
def test_what_babeleval_cannot_give_is_refused_at_start_up_with_the_reason(spec, reason):
    from babeleval.tasks import lmeval_catalogue as catalogue

    with pytest.raises(ConfigError, match=reason):
        catalogue.plan(spec, ["eng_Latn"], "tasks.x.lmeval")


def test_a_grid_entry_is_checked_before_any_job(tmp_path):
    from babeleval.grid.params import load_params

    grid = load_params(ROOT / "examples" / "local_vs_translated.yaml", root=ROOT)
    assert {"include", "global_piqa", "global_mmlu", "belebele"} <= set(grid.tasks)
    record = next(r for r in grid.records.values() if r.task == "include")
    assert [m.name for m in record.metrics] == ["acc"]
    bad = (ROOT / "examples" / "local_vs_translated.yaml").read_text().replace("templates: [include_base_44_japanese]",
                                                                       "templates: [paper]")
    (tmp_path / "params.yaml").write_text(bad)
    with pytest.raises(ConfigError, match=r"tasks.include.templates: an lm-eval task has one template"):
        load_params(tmp_path / "params.yaml", root=ROOT)
    missing = (ROOT / "examples" / "local_vs_translated.yaml").read_text().replace(
        "languages: [jpn_Jpan, hin_Deva]\n    templates: [global_piqa", "languages: [jpn_Jpan, yor_Latn]\n    templates: [global_piqa")
    (tmp_path / "params.yaml").write_text(missing)
    with pytest.raises(ConfigError, match=r"tasks.global_piqa.languages: no data file for .*yor_latn/test.jsonl"):
        load_params(tmp_path / "params.yaml", root=ROOT)


@pytest.mark.slow
def test_preparing_an_lm_eval_task_imports_neither_torch_nor_transformers():
    """The prepare and render jobs (CPU) import lm-eval and datasets, never a model library."""
    import subprocess
    import sys

    code = ("import sys, time\nstart = time.perf_counter()\nfrom babeleval.tasks import get_task, lmeval\n"
            "lmeval.register({'include': {'lmeval': 'include_base_44_japanese'}})\n"
            f"items = get_task('include').load({{'kind': 'local', 'path': {str(LMEVAL_SAMPLES / 'include')!r}}}, "
            "'jpn_Jpan')\n"
            "assert len(items) == 7, len(items)\n"
            "heavy = [m for m in ('torch', 'transformers') if m in sys.modules]\nassert not heavy, heavy\n"
            "print(f'prepared in {time.perf_counter() - start:.1f} s')\n")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    print(done.stdout)
