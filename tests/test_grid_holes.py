"""A grid with holes, and what the planner says before a run: models that name their tasks, pairs a backend cannot
answer, an API key's unset variable, `chat: true` without a chat template, a big grid's size, `sample: all` refused.

Each against the real validation of params.yaml (babeleval.grid.params) on the repository's templates and samples.
"""

import copy
import json

import pytest
import yaml

from babeleval.core.errors import ConfigError, MachineError
from babeleval.grid import plan
from babeleval.grid.checks import check_api_keys, check_chat_templates, check_local_data
from babeleval.grid.params import validate

from conftest import TINY_GRID

API_CHAT = {"backend": "openai", "model": "chat-model", "base_url": "http://127.0.0.1:9/v1", "chat": True,
            "api_key_env": "BABELEVAL_HOLES_KEY"}


@pytest.fixture(scope="module")
def base_params(repo_root):
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"] = {name: params["tasks"][name] for name in ("belebele", "jsquad")}
    return params


def grid_of(params, repo_root, models):
    params = copy.deepcopy(params)
    params["models"] = models
    return validate(params, source_file="params.yaml", root=repo_root)


def test_a_chat_api_model_runs_what_it_can_and_says_why_not_the_rest(base_params, repo_root):
    grid = grid_of(base_params, repo_root, {"tiny": {"backend": "hf", "builtin": "tiny-llama"}, "api": API_CHAT})
    api = {(t, tpl) for m, t, _, tpl in grid.combinations() if m == "api"}
    assert api == {("belebele", "instruct"), ("belebele", "blog"), ("jsquad", "0.1")}
    assert {(t, tpl) for m, t, _, tpl in grid.combinations() if m == "tiny"} == {
        ("belebele", "paper"), ("belebele", "instruct"), ("belebele", "blog"), ("jsquad", "0.1")}
    [left_out] = grid.omitted
    assert (left_out.model, left_out.task, left_out.template) == ("api", "belebele", "paper")
    assert "log-likelihood template on a chat endpoint" in left_out.reason
    assert ("api", "belebele", "eng_Latn", "paper") not in grid.records

    lines = plan.plan_lines(grid, {}, "template")
    assert lines[0].startswith("babeleval: 3 combinations left out of the grid (results/plan/omitted.tsv)")
    assert "api: belebele/paper: log-likelihood template on a chat endpoint" in lines[1]


def test_a_completions_endpoint_answers_log_likelihood(base_params, repo_root):
    entry = {**API_CHAT, "chat": False, "endpoint": "completions"}
    assert not grid_of(base_params, repo_root, {"api": entry}).omitted


def test_a_model_runs_the_tasks_and_templates_it_names(base_params, repo_root, tmp_path):
    grid = grid_of(base_params, repo_root, {
        "all": {"backend": "hf", "builtin": "tiny-llama"},
        "one_task": {"backend": "hf", "builtin": "tiny-llama", "tasks": ["jsquad"]},
        "one_template": {"backend": "hf", "builtin": "tiny-llama", "tasks": {"belebele": ["instruct"]}},
    })
    runs = {}
    for model, task, _, template in grid.combinations():
        runs.setdefault(model, set()).add((task, template))
    assert runs["one_task"] == {("jsquad", "0.1")}
    assert runs["one_template"] == {("belebele", "instruct")}
    assert len(runs["all"]) == 4
    reasons = {(o.model, o.task, o.template): o.reason for o in grid.omitted}
    assert reasons[("one_task", "belebele", "paper")] == "not asked for (models.one_task.tasks)"
    assert set(reasons) == {("one_task", "belebele", t) for t in ("paper", "instruct", "blog")} | {
        ("one_template", "belebele", "paper"), ("one_template", "belebele", "blog"), ("one_template", "jsquad", "0.1")}

    out = tmp_path / "omitted.tsv"
    plan.write_omitted(plan.omitted_file_rows(grid), out)
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["model", "task", "language", "template", "reason"]
    languages = len(base_params["tasks"]["belebele"]["languages"])
    assert ["one_template", "jsquad", "jpn_Jpan", "0.1", "not asked for (models.one_template.tasks)"] in rows
    assert len(rows) == 1 + 5 * languages + 1


@pytest.mark.parametrize("tasks, message", [
    (["jcommonsenseqa"], r"models\.m\.tasks: task 'jcommonsenseqa' is not in the grid's tasks"),
    ({"belebele": ["papr"]}, r"models\.m\.tasks\.belebele: template papr not in tasks\.belebele"),
    ("belebele", r"models\.m\.tasks"),
])
def test_a_model_naming_what_the_grid_lacks_is_refused(base_params, repo_root, tasks, message):
    with pytest.raises(ConfigError, match=message):
        grid_of(base_params, repo_root, {"m": {"backend": "hf", "builtin": "tiny-llama", "tasks": tasks}})


def test_an_unset_api_key_variable_stops_planning_naming_the_entry(base_params, repo_root):
    grid = grid_of(base_params, repo_root, {"api": API_CHAT})
    with pytest.raises(MachineError, match=r"params\.yaml: models\.api\.api_key_env: the environment variable "
                                           r"BABELEVAL_HOLES_KEY is not set or empty") as caught:
        check_api_keys(grid, environ={})
    assert "sk-" not in str(caught.value)
    check_api_keys(grid, environ={"BABELEVAL_HOLES_KEY": "sk-x"})


def test_chat_true_without_a_chat_template_stops_planning(base_params, repo_root, tmp_path):
    with pytest.raises(ConfigError, match=r"models\.tiny\.chat: true, but the tokenizer of builtin tiny-llama has "
                                          r"no chat template"):
        check_chat_templates(grid_of(base_params, repo_root, {"tiny": {"backend": "hf", "builtin": "tiny-llama",
                                                                       "chat": True}}))
    model = tmp_path / "base-model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    (model / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<s>"}), encoding="utf-8")
    entry = {"backend": "hf", "model": str(model), "chat": True}
    with pytest.raises(ConfigError, match=r"models\.local\.chat: true, but the tokenizer of .*base-model has no chat"):
        check_chat_templates(grid_of(base_params, repo_root, {"local": entry}))
    (model / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ messages }}"}), encoding="utf-8")
    check_chat_templates(grid_of(base_params, repo_root, {"local": entry}))
    # the entry's own chat template replaces the tokenizer's: nothing to check
    check_chat_templates(grid_of(base_params, repo_root, {"tiny": {"backend": "hf", "builtin": "tiny-llama",
                                                                   "chat": True, "chat_template": "x.jinja"}}))


def test_sample_all_on_a_large_family_is_refused_with_the_count_and_the_alternatives(base_params, repo_root):
    params = copy.deepcopy(base_params)
    params["tasks"]["belebele"]["variants"] = {"formatspread": {"sample": "all"}}
    with pytest.raises(ConfigError) as caught:
        validate(params, source_file="params.yaml", root=repo_root)
    message = str(caught.value)
    assert "tasks.belebele.variants.formatspread: sample: all would evaluate 5,184 variants" in message
    assert "sample: k" in message and "python -m babeleval search" in message
    # a narrowed family is taken whole
    params["tasks"]["belebele"]["variants"] = {"formatspread": {"sample": "all", "axes": {"enum": ["upper", "num"],
                                                                                          "sep": ["colon", "dash"]}}}
    grid = validate(params, source_file="params.yaml", root=repo_root)
    assert sum(name.startswith("formatspread~") for name in grid.tasks["belebele"].templates) == 3


def test_a_big_grid_says_its_size_and_cost_before_it_starts(base_params, repo_root, monkeypatch):
    grid = grid_of(base_params, repo_root, {"tiny": {"backend": "hf", "builtin": "tiny-llama"}, "api": API_CHAT})
    items = check_local_data(grid, repo_root)
    assert plan.size_lines(grid, items, "template") == []  # small: nothing to say
    monkeypatch.setattr(plan, "SIZE_NOTICE", 5)
    lines = plan.size_lines(grid, items, "template")
    combos = len(list(grid.combinations()))
    assert lines[0] == (f"babeleval: a big grid: {combos:,} combinations (2 models, 2 tasks); 4 rendering, 7 generation "
                        "and 7 scoring jobs")
    # the bundled Belebele sample has 24 items a language (3 languages), jsquad is limited to 4
    assert items["belebele", "eng_Latn"] == 24 and base_params["tasks"]["jsquad"]["limit"] == 4
    assert lines[1:4] == ["  items the models are asked: 368", "  tiny: 220 items", "  api: 148 items"]
