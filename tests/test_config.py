"""params.yaml validation: a bad grid stops before any job, with a message naming the key."""

import copy

import pytest
import yaml

from babeleval.grid.params import load_params, validate
from babeleval.core.errors import ConfigError

from conftest import TINY_GRID


@pytest.fixture
def params(repo_root):
    return yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))


def check(params, repo_root):
    return validate(params, source_file="params.yaml", root=repo_root)


def test_default_params_are_valid(repo_root):
    """The default grid: the real builtin model, as a base model on the log-likelihood templates and as a chat
    model on the generated ones."""
    grid = load_params(repo_root / "params.yaml", root=repo_root)
    combos = list(grid.combinations())
    assert ("smollm2", "belebele", "jpn_Jpan", "paper") in combos
    assert ("smollm2-chat", "belebele", "jpn_Jpan", "instruct") in combos
    assert ("smollm2", "belebele", "jpn_Jpan", "instruct") not in combos
    assert ("smollm2-chat", "belebele", "jpn_Jpan", "paper") not in combos
    assert {config.builtin for config in grid.models.values()} == {"smollm2-135m-instruct"}
    assert grid.models["smollm2-chat"].chat and not grid.models["smollm2"].chat
    assert grid.tasks["belebele"].templates["paper"].mode == "loglikelihood"


def test_the_tests_grid_has_every_task_of_the_default_grid(repo_root):
    """tests/grids/tiny.yaml, the grid the workflow tests run on the tiny random model, keeps up with params.yaml."""
    default = load_params(repo_root / "params.yaml", root=repo_root)
    tiny = load_params(TINY_GRID, root=repo_root)
    assert set(tiny.models) == {"tiny-llama"}
    for name, task in default.tasks.items():
        assert set(task.languages) <= set(tiny.tasks[name].languages), name
        assert set(task.templates) <= set(tiny.tasks[name].templates), name


def mutate(params, path, value):
    params = copy.deepcopy(params)
    *parents, last = path
    node = params
    for key in parents:
        node = node[key]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return params


@pytest.mark.parametrize("path, value, message", [
    (["tasks", "belebele", "templtes"], ["paper"], r"tasks\.belebele\.templtes: unknown key \(did you mean 'templates'\?\)"),
    (["sede"], 1, r"sede: unknown key \(did you mean 'seed'\?\)"),
    (["seed"], "one", r"seed: 'one' is not of type 'integer'"),
    (["tasks", "belebele", "limit"], 0, r"tasks\.belebele\.limit: 0 is less than the minimum of 1"),
    (["models", "tiny-llama", "dtype"], "float33", r"models\.tiny-llama\.dtype: 'float33' is not one of"),
    (["models", "tiny-llama", "batch_size"], "8", r"models\.tiny-llama\.batch_size: '8' is not of type 'integer'"),
    (["tasks", "belebele", "languages"], [], r"tasks\.belebele\.languages: \[\] should be non-empty"),
    (["models"], {}, r"models: \{\} should be non-empty"),
    (["tasks", "belebele", "source", "kind"], "ftp", r"tasks\.belebele\.source\.kind: 'ftp' is not one of"),
    (["decoding", "greedy", "temprature"], 0.5, r"decoding\.greedy\.temprature: unknown key \(did you mean 'temperature'\?\)"),
])
def test_schema_errors_name_the_key(params, repo_root, path, value, message):
    with pytest.raises(ConfigError, match=message):
        check(mutate(params, path, value), repo_root)


def test_misspelt_template(params, repo_root):
    bad = mutate(params, ["tasks", "belebele", "templates"], ["paper", "instrcut"])
    with pytest.raises(ConfigError, match=r"tasks\.belebele\.templates: .*instrcut\.yaml: no template 'instrcut'.*available: blog, formatspread, instruct, paper"):
        check(bad, repo_root)


def test_unknown_task(params, repo_root):
    bad = mutate(params, ["tasks", "belebelle"], params["tasks"]["belebele"])
    with pytest.raises(ConfigError, match=r"tasks: 'belebelle' is not one of"):
        check(bad, repo_root)


def test_missing_language_file(params, repo_root):
    bad = mutate(params, ["tasks", "belebele", "languages"], ["eng_Latn", "yor_Latn"])
    with pytest.raises(ConfigError, match=r"tasks\.belebele\.languages: no data file for .*yor_Latn\.jsonl"):
        check(bad, repo_root)


def test_model_needs_exactly_one_source(params, repo_root):
    bad = mutate(params, ["models", "tiny-llama", "model"], "gpt2")
    with pytest.raises(ConfigError, match=r"models\.tiny-llama: give exactly one of 'model'"):
        check(bad, repo_root)


def test_undefined_decoding_preset(params, repo_root):
    bad = mutate(params, ["decoding", "llama-precise"], KeyError)
    with pytest.raises(ConfigError, match=r"blog\.yaml: decoding preset 'llama-precise' is not defined"):
        check(bad, repo_root)
