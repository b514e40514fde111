"""The extractor model (babeleval.score.extraction): a template that names one has it read the replies the rule
parsers fail on; its reply is read by the same parser, its calls cached and counted, its agreement reported."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from babeleval.analysis.parse_failures import extractor_table
from babeleval.core.errors import ConfigError, TemplateError
from babeleval.core.jsonl import read_jsonl, write_jsonl
from babeleval.core.paths import Combo
from babeleval.generate.job import JobFiles, answer_job
from babeleval.prompts.templates import load_template
from babeleval.score import extraction, job, scorers
from conftest import ROOT, copy_workflow, snakemake
from resolved_record import record_for

CHOICES = ["London", "Paris", "Rome", "Berlin"]


def _item(number: int, response: str, finish_reason: str = "stop", language: str = "eng_Latn") -> dict:
    return {"id": number, "language": language, "choices": CHOICES, "answer": 1, "response": response,
            "finish_reason": finish_reason}


def _instruct(extractor: str | None = "judge"):
    return replace(load_template("belebele", "instruct", ROOT), extractor=extractor)


def test_extractor_answer_counts_only_where_the_rules_fail():
    template = _instruct()
    unread = _item(1, "I would go with the city of light.")
    scored = scorers.score_record("multiple_choice", unread, template, {"response": "B", "finish_reason": "stop"})
    assert (scored["parsed"], scored["correct"], scored["answer_source"]) == (True, True, "extractor")
    assert scored["rule_answer"] is None and scored["extractor_answer"] == "B"
    assert scored["rule_error"].startswith("no answer") and scored["parse_error"] is None
    # the rules read C: the extractor's B is recorded beside it, never taken over it
    read = _item(2, "C")
    scored = scorers.score_record("multiple_choice", read, template, {"response": "B", "finish_reason": "stop"})
    assert (scored["parsed_answer"], scored["answer_source"], scored["extractor_answer"]) == ("C", "rules", "B")


@pytest.mark.parametrize("reply, reason", [
    ("NONE", "no answer"),                   # the prompt's word for no answer
    ("E", "no answer"),                      # not one of the template's labels: not coerced
    ("The answer is A. Paris", "ambiguous"),  # one option's label with another's text
])
def test_an_extractor_reply_that_does_not_parse_leaves_the_failure(reply, reason):
    scored = scorers.score_record("multiple_choice", _item(1, "Hmm, hard to say."), _instruct(),
                                  {"response": reply, "finish_reason": "stop"})
    assert not scored["parsed"] and scored["parse_error"].startswith("no answer")  # the rule parser's reason
    assert scored["answer_source"] is None and scored["extractor_error"].startswith(reason)


def test_an_extractor_that_lists_the_classes_names_none():
    template = replace(load_template("topic_classification", "en_zeroshot", ROOT), extractor="judge")
    topics = ["science/technology", "travel", "politics", "sports", "health"]
    record = {"id": 1, "language": "eng_Latn", "choices": topics, "answer": 3, "finish_reason": "stop",
              "response": "A football match, I would say."}
    listed = scorers.score_record("classification", record, template,
                                  {"response": "science/technology, travel, politics, sports, health"})
    assert listed["answer_source"] is None and listed["extractor_error"].startswith("no answer: lists the topics")
    one = scorers.score_record("classification", record, template, {"response": "sports"})
    assert (one["answer_source"], one["correct"]) == ("extractor", True)


def test_a_reply_that_is_an_options_text_takes_only_its_label():
    """The demo model answered a Japanese item with an option's text alone (チーズ, option C); its extractor wrote
    "B. 蜜ろうのろうそく", option B whole. That is not the reply's answer: ambiguous, not B."""
    choices = ["卵", "蜜ろうのろうそく", "チーズ", "鮮魚"]
    record = {"id": 1, "language": "jpn_Jpan", "choices": choices, "answer": 3, "response": "チーズ",
              "finish_reason": "stop"}
    other = scorers.score_record("multiple_choice", record, _instruct(), {"response": "B. 蜜ろうのろうそく"})
    assert other["answer_source"] is None and other["extractor_error"].startswith("ambiguous")
    same = scorers.score_record("multiple_choice", record, _instruct(), {"response": "C"})
    assert (same["answer_source"], same["parsed_answer"]) == ("extractor", "C")


def test_only_complete_replies_are_asked():
    prompt = extraction.load_prompt(ROOT)
    records = [_item(1, "B"), _item(2, "Hard to say."), _item(3, "<think>Paris is", "length"), _item(4, ""),
               _item(5, "A: London\nB: Paris\nC: Rome\nD: Berlin")]
    mmlu = replace(load_template("mmlu", "en_zeroshot", ROOT), extractor="judge")
    rows = extraction.request_rows(records, mmlu, "multiple_choice", prompt)
    # read, no answer; not cut while reasoning, not empty, not a restated list of the options (a real small model's
    # extractor copied such a list's first line, "A: London")
    assert [row["id"] for row in rows] == [1, 2]
    assert "B. Paris" in rows[1]["prompt"] and "Hard to say." in rows[1]["prompt"]
    assert "A, B, C, D" in rows[1]["prompt"] and "NONE" in rows[1]["prompt"]
    # a template without an extractor scores as it always did: no extractor fields
    plain = scorers.score_record("multiple_choice", records[1], _instruct(None))
    assert "answer_source" not in plain


def test_agreement_table_per_language():
    rows = {Combo("m", "belebele", "eng_Latn", "x"): [
        {"extractor": "judge", "extractor_asked": True, "rule_answer": "A", "extractor_answer": "A",
         "answer_source": "rules"},
        {"extractor": "judge", "extractor_asked": True, "rule_answer": "B", "extractor_answer": "C",
         "answer_source": "rules"},
        {"extractor": "judge", "extractor_asked": True, "rule_answer": None, "extractor_answer": "D",
         "answer_source": "extractor"},
        {"extractor": "judge", "extractor_asked": False, "rule_answer": None, "extractor_answer": None,
         "answer_source": None}],
        Combo("m", "belebele", "eng_Latn", "plain"): [{"parsed": True}]}
    table = extractor_table(rows)
    assert len(table) == 1
    row = table.iloc[0]
    assert (row.both_read, row.agree, row.agreement_pct, row.rule_failures, row.from_extractor, row.asked) == (
        2, 1, 50.0, 2, 1, 3)


def test_template_and_grid_checks(tmp_path):
    wf = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    source = (wf / "prompts/belebele/paper.yaml").read_text(encoding="utf-8")
    (wf / "prompts/belebele/paper_x.yaml").write_text(source + "\nextractor: tiny-llama\n", encoding="utf-8")
    with pytest.raises(TemplateError, match="'extractor' reads a generated answer"):
        load_template("belebele", "paper_x", wf)
    _extracted_template(wf, "nobody")
    params = yaml.safe_load((wf / "params.yaml").read_text(encoding="utf-8"))
    params["tasks"]["belebele"]["templates"] = ["extracted"]
    from babeleval.grid.params import validate
    with pytest.raises(ConfigError, match=r"extracted\.yaml: extractor: 'nobody' is not a model of params\.yaml "
                                          r"\(models: tiny-llama\)"):
        validate(params, root=wf)


def _extracted_template(wf: Path, extractor: str) -> None:
    source = (wf / "prompts/belebele/instruct.yaml").read_text(encoding="utf-8")
    (wf / "prompts/belebele/extracted.yaml").write_text(source + f"\nextractor: {extractor}\n", encoding="utf-8")


def _generations(path: Path, language: str) -> None:
    write_jsonl(path, [_item(1, f"A ({language})", language=language),
                       _item(2, f"Well, that depends ({language}).", language=language),
                       _item(3, "<think>maybe", "length", language=language)])


def test_job_caches_and_counts_its_calls(tmp_path, tiny_model_dir, monkeypatch):
    """The job on the tiny model: one file per language, a usage file under the extractor's name; run again, every
    request comes from the cache (no model load); scoring reads its file."""
    wf = copy_workflow(tmp_path / "wf", tasks=("belebele",))
    _extracted_template(wf, "judge")
    monkeypatch.chdir(wf)
    generations, extractions = [], []
    for language in ("eng_Latn", "jpn_Jpan"):
        generations.append(str(wf / f"gen_{language}.jsonl"))
        extractions.append(str(wf / f"ext_{language}.jsonl"))
        _generations(Path(generations[-1]), language)
    requests = extraction.write_requests("belebele", "extracted", "multiple_choice", generations, wf)
    args = dict(entry={"backend": "hf", "model": str(tiny_model_dir), "dtype": "float32", "device": "cpu"},
                model_path=str(tiny_model_dir), settings=extraction.settings(extraction.load_prompt(), 8),
                files=JobFiles(requests, dict(zip(requests, extractions)), str(wf / "cache.sqlite"),
                               str(wf / "usage.json")),
                usage_fields={"model": "judge", "extraction": True})
    assert answer_job(**args) == {"requests": 4, "cache_hits": 0, "computed": 4}
    usage = json.loads((wf / "usage.json").read_text(encoding="utf-8"))
    assert (usage["model"], usage["computed"], usage["extraction"]) == ("judge", 4, True)
    assert usage["tokens_computed"]["completion"] > 0
    rows = read_jsonl(extractions[0])
    assert [row["id"] for row in rows] == [1, 2] and all(isinstance(row["response"], str) for row in rows)
    assert rows[0]["settings"]["max_new_tokens"] == 8

    def no_load(*_):
        raise AssertionError("the model was loaded although the cache holds every answer")
    monkeypatch.setattr("babeleval.generate.backends.load_backend", no_load)
    assert answer_job(**args) == {"requests": 4, "cache_hits": 4, "computed": 0}

    summary = job.score_files(generations=generations[0], record=record_for("belebele", "eng_Latn", "extracted", wf),
                              raw_out=str(wf / "raw.jsonl"), scores_out=str(wf / "scores.json"),
                              labels={"model": "m"}, extractions=extractions[0])
    assert summary["extractor"]["model"] == "judge" and summary["extractor"]["asked"] == 2
    raw = read_jsonl(wf / "raw.jsonl")
    assert [r["extractor_asked"] for r in raw] == [True, True, False]
    assert raw[0]["answer_source"] == "rules" and raw[0]["rule_answer"] == "A"


@pytest.mark.workflow
def test_workflow_plans_extraction_and_reruns_only_what_depends_on_it(tmp_path, built_tiny_model):
    """A real run: the extraction job sits between generation and scoring; its usage reaches the run summary under
    the extractor's name; a changed extractor setting reruns extraction and scoring, not generation."""
    wf = copy_workflow(tmp_path / "wf", tasks=("belebele",), built=built_tiny_model)
    _extracted_template(wf, "judge")
    params = yaml.safe_load((wf / "params.yaml").read_text(encoding="utf-8"))
    params["models"]["judge"] = {**params["models"]["tiny-llama"], "tasks": []}  # an extractor only
    params["tasks"]["belebele"].update(templates=["extracted"], limit=4)
    (wf / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    run = snakemake(wf)
    assert re.search(r"judge: 1 job\(s\) that asked the model, \d+ requests", run.stdout + run.stderr)
    assert (wf / "results/analysis/extractor_agreement.csv").exists()
    assert "Extractor model" in (wf / "results/report.html").read_text(encoding="utf-8")
    outcomes = wf / "results/extractions/tiny-llama/belebele/eng_Latn/extracted.jsonl"
    assert outcomes.exists()
    params["models"]["judge"]["max_new_tokens"] = 5
    (wf / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    planned = {rule for rule in re.findall(r"^(?:local)?rule (\S+):", snakemake(wf, "-n").stdout, re.M)}
    assert "extract_belebele" in planned and "score_belebele" in planned
    assert "generate_belebele" not in planned and "render_prompts_belebele" not in planned


@pytest.mark.slow
def test_real_model_extracts_real_replies(tmp_path, smollm2_dir, monkeypatch):
    """SmolLM2-135M-Instruct, through its chat template, as the extractor of two MGSM replies: one the rules read
    (its reading is recorded beside theirs, and agrees), one they cannot (its reply is read by the same parser: an
    answer, or a failure with a named reason; never the rule's failure overwritten by something unparsed)."""
    from babeleval.score.parsers import REASONS

    wf = copy_workflow(tmp_path / "wf", tasks=("mgsm",))
    source = (wf / "prompts/mgsm/en_zeroshot.yaml").read_text(encoding="utf-8")
    (wf / "prompts/mgsm/extracted.yaml").write_text(source + "\nextractor: smollm2\n", encoding="utf-8")
    monkeypatch.chdir(wf)
    records = [{"id": 1, "language": "eng_Latn", "answer": "18", "response": "18", "finish_reason": "stop"},
               {"id": 2, "language": "eng_Latn", "answer": "18", "finish_reason": "stop",
                "response": "Janet earns 18 dollars at the market every day."}]
    write_jsonl(wf / "gen.jsonl", records)
    entry = {"backend": "hf", "model": str(smollm2_dir), "chat": True, "dtype": "float32", "device": "cpu"}
    requests = extraction.write_requests("mgsm", "extracted", "math", [str(wf / "gen.jsonl")], wf)
    decoding = extraction.settings(extraction.load_prompt(), None)
    counts = answer_job(entry=entry, model_path=str(smollm2_dir), settings=decoding,
                        files=JobFiles(requests, {"0": str(wf / "ext.jsonl")}, None), usage_fields={})
    assert counts["computed"] == 2
    extracted = {row["id"]: row for row in read_jsonl(wf / "ext.jsonl")}
    assert extracted[1]["chat_template_sha256"]  # the extractor answered through its own chat template
    template = load_template("mgsm", "extracted")
    read, unread = (scorers.score_record("math", r, template, extracted[r["id"]]) for r in records)
    print(repr(extracted[1]["response"]), repr(extracted[2]["response"]))
    assert (read["answer_source"], read["rule_answer"], read["extractor_answer"]) == ("rules", "18", "18")
    assert unread["rule_answer"] is None and unread["extractor_asked"]
    if unread["extractor_answer"] is None:
        assert not unread["parsed"] and unread["parse_error"].startswith("no answer")
        assert unread["extractor_error"].split(":")[0] in REASONS
    else:
        assert unread["answer_source"] == "extractor" and unread["prediction"] == unread["extractor_answer"]
