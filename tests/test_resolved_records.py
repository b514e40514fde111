"""One resolved record per combination (babeleval.grid.records): decided once at validation, read by everything else."""

from __future__ import annotations

import json
from types import SimpleNamespace

from conftest import ROOT, TINY_GRID

from babeleval.cli import show
from babeleval.grid.params import load_params
from babeleval.score.provenance import dataset_provenance
from babeleval.grid.resolve import decoding_settings, exemplar_source
from babeleval.tasks import get_task

PARAMS = TINY_GRID


def grid():
    return load_params(PARAMS, root=ROOT)


def test_every_combination_of_the_grid_has_one_record():
    g = grid()
    assert set(g.records) == set(g.combinations())
    assert set(g.prompts) == {(t, lang, tpl) for _, t, lang, tpl in g.combinations()}
    for key, record in g.records.items():
        assert (record.model, record.task, record.language, record.template) == key
        assert record.prompts is g.prompts[key[1:]]  # one prompt record, shared by the models


def test_exemplar_pool_follows_the_task_split_and_the_template_language():
    g = grid()
    # JGLUE: exemplars from the prepared train split of the item's language; evaluated items shuffled with 42
    jsquad = g.prompt_record("jsquad", "jpn_Jpan", "0.1")
    assert jsquad.exemplar_part == "fewshot" and jsquad.shuffle_seed == 42 and jsquad.limit == 4
    assert jsquad.exemplar_files == ("data/prepared/jsquad/fewshot/jpn_Jpan.jsonl",)
    # Belebele "paper": five English exemplars for every language, from the evaluated English rows
    paper = g.prompt_record("belebele", "hin_Deva", "paper")
    assert (paper.exemplar_part, paper.exemplar_languages) == ("eval", ("eng_Latn",))
    assert paper.data == "data/prepared/belebele/hin_Deva.jsonl"
    assert paper.exemplar_files == ("data/prepared/belebele/eng_Latn.jsonl",)
    # "blog": exemplars of the item's own language; "instruct": zero-shot, no pool at all
    assert g.prompt_record("belebele", "jpn_Jpan", "blog").exemplar_files == ("data/prepared/belebele/jpn_Jpan.jsonl",)
    instruct = g.prompt_record("belebele", "jpn_Jpan", "instruct")
    assert (instruct.exemplar_part, instruct.exemplar_files) == (None, ())


def test_a_zero_shot_template_of_a_task_with_a_train_split_reads_no_train_file():
    jnli = get_task("jnli")
    zero_shot = SimpleNamespace(fewshot=SimpleNamespace(n=0, language=None))
    assert exemplar_source(jnli, zero_shot, "jpn_Jpan") == (None, ())
    three_shot = SimpleNamespace(fewshot=SimpleNamespace(n=3, language=None))
    assert exemplar_source(jnli, three_shot, "jpn_Jpan") == ("fewshot", ("jpn_Jpan",))
    # provenance hashes what the record says was read: the validation split only
    source = {"kind": "local", "path": "data/samples/jnli"}
    zero = dataset_provenance("jnli", source, {}, [("jpn_Jpan", "eval")], [], root=ROOT)
    assert list(zero["files_sha256"]) == ["data/samples/jnli/valid-v1.3.json"]
    few = dataset_provenance("jnli", source, {}, [("jpn_Jpan", "eval"), ("jpn_Jpan", "fewshot")], [], root=ROOT)
    assert sorted(few["files_sha256"]) == ["data/samples/jnli/train-v1.3.json", "data/samples/jnli/valid-v1.3.json"]


def test_decoding_is_the_template_preset_capped_by_the_model():
    g = grid()
    record = g.record("tiny-llama", "mmlu", "hin_Deva", "en_zeroshot")
    template = g.tasks["mmlu"].templates["en_zeroshot"]
    assert template.generation.max_new_tokens > 24  # the model's cap applies
    preset = g.decoding[template.generation.decoding]
    assert dict(record.decoding) == decoding_settings(
        "generate", {"max_new_tokens": 24, "stop": list(template.generation.stop)}, preset, g.seed)
    assert dict(g.record("tiny-llama", "belebele", "eng_Latn", "paper").decoding) == {"mode": "loglikelihood"}
    assert record.parser == template.parser
    assert record.model_outputs["max_new_tokens"] == 24 and "batch_size" not in record.model_outputs


def test_metrics_know_their_scale_direction_headline_and_bootstrap():
    g = grid()
    translation = g.record("tiny-llama", "translation_to", "hin_Deva", "en_zeroshot")
    metrics = {m.name: m for m in translation.metrics}
    assert metrics["chrf"].headline and not metrics["bleu"].headline
    assert metrics["chrf"].scale == "0-100" and metrics["chrf"].bootstrap == "corpus"
    assert metrics["parse_failure_rate"].higher_is_better is False and metrics["parse_failure_rate"].scale == "0-1"
    assert translation.metric_options["target_language"] == "hin_Deva"  # BLEU's tokenizer follows the target
    for record in g.records.values():
        assert sum(m.headline for m in record.metrics) == 1, record.template


def test_show_prints_the_record_the_scores_file_holds(capsys):
    g = grid()
    assert show.main(["--params", str(PARAMS), "--task", "jnli", "--language", "jpn_Jpan", "--template", "0.2",
                      "--record", "--model", "tiny-llama"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == g.record("tiny-llama", "jnli", "jpn_Jpan", "0.2").as_json()
    assert printed["prompts"]["exemplar_files"] == ["data/prepared/jnli/fewshot/jpn_Jpan.jsonl"]
    assert show.main(["--params", str(PARAMS), "--task", "jnli", "--language", "jpn_Jpan", "--template", "0.2",
                      "--record", "--model", "gpt-9"]) == 2
    assert "not a combination" in capsys.readouterr().err


def test_the_prompt_record_carries_the_few_shot_plan_and_builds_the_requests(tmp_path):
    """The rendering job, show and search build an item's requests from the record alone, the same way."""
    from babeleval.core.jsonl import read_jsonl, write_jsonl
    from babeleval.prompts.record import PromptRecord
    from babeleval.prompts.render import requests_for

    g = grid()
    record = g.prompt_record("jnli", "jpn_Jpan", "0.2")
    template = g.tasks["jnli"].templates["0.2"]
    assert record.fewshot == template.fewshot and record.fewshot.n == 3 and record.fewshot.sampler == "stratified"
    assert PromptRecord.from_json(json.loads(json.dumps(record.as_json()))) == record  # as the jobs receive it
    scored = g.record("tiny-llama", "jnli", "jpn_Jpan", "0.2").as_json()
    assert scored["prompts"]["fewshot"]["n"] == 3  # in every scores file's provenance
    # from the task's own files (show, search) and from prepared files (the rendering job): the same requests
    from_source = show.render_for(str(PARAMS), "jnli", "jpn_Jpan", "0.2")
    for language, part in record.reads():
        write_jsonl(tmp_path / record.file(language, part), get_task("jnli").load(
            g.tasks["jnli"].source, language, root=ROOT, part=part, options=g.tasks["jnli"].options))
    from_prepared = requests_for(template, record,
                                 lambda language, part: read_jsonl(tmp_path / record.file(language, part)))
    assert from_source == from_prepared and len(from_source) == 4
