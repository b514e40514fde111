"""Catalogue of bad inputs, part 1: params.yaml. Each case stops the run at start-up (table: tests/README.md)."""

import pytest

from badinput_support import Case, edit_params, fresh_copy, plan_broken, pristine, witness, write_text


def _set(path, value):
    def change(params):
        node = params
        for key in path[:-1]:
            node = node[key]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return change


def _rename(path, new):
    def change(params):
        node = params
        for key in path[:-1]:
            node = node[key]
        node[new] = node.pop(path[-1])
    return change


def _add_model(name, spec):
    def change(params):
        params["models"][name] = spec
    return change


P = r"params\.yaml: "  # every message starts with the file

CASES = [
    Case("unknown-builtin-model", edit_params(_set(["models", "tiny-llama", "builtin"], "tiny-lama")),
         [P + r"invalid configuration",
          r"models\.tiny-llama\.builtin: 'tiny-lama' is not one of \['tiny-llama', 'smollm2-135m-instruct'\]"]),
    Case("unknown-backend", edit_params(_set(["models", "tiny-llama", "backend"], "hff")),
         [r"models\.tiny-llama\.backend: 'hff' is not one of"]),
    Case("missing-local-model-directory",
         edit_params(_add_model("mine", {"backend": "hf", "model": "./checkpoints/my-llama"})),
         [P + r"models\.mine\.model: directory \./checkpoints/my-llama does not exist"]),
    Case("model-path-without-dot",
         edit_params(_add_model("mine", {"backend": "hf", "model": "checkpoints/tiny-c", "device": "cpu"})),
         [P + r"models\.mine\.model: 'checkpoints/tiny-c' is neither a local folder nor in the local hub cache "
              r"\(.*\): for a folder, check the path and write it as \./checkpoints/tiny-c"]),
    Case("unknown-task", edit_params(_rename(["tasks", "belebele"], "belebelle")),
         [P + r"invalid configuration", r"tasks: 'belebelle' is not one of \['belebele', "]),
    Case("unknown-template", edit_params(_set(["tasks", "belebele", "templates"], ["paper", "instrcut"])),
         [P + r"tasks\.belebele\.templates: prompts/belebele/instrcut\.yaml: no template 'instrcut' for task "
              r"'belebele' \(available: blog, formatspread, instruct, paper\)"]),
    Case("unknown-language", edit_params(_set(["tasks", "belebele", "languages"], ["eng_Latn", "yor_Latn"])),
         [P + r"tasks\.belebele\.languages: no data file for data/samples/belebele/yor_Latn\.jsonl"]),
    Case("language-not-a-code", edit_params(_set(["tasks", "belebele", "languages"], ["eng Latn"])),
         [r"tasks\.belebele\.languages\.0: 'eng Latn' does not match"]),
    Case("language-short-code", edit_params(_set(["tasks", "belebele", "languages"], ["eng_Latn", "hi"])),
         [P + r"tasks\.belebele\.languages: 'hi' is not a FLORES-200 language code \(did you mean hin_Deva\?\)"]),
    Case("misspelt-top-level-key", edit_params(_rename(["seed"], "sede")),
         [r"sede: unknown key \(did you mean 'seed'\?\)", r"\(top level\): 'seed' is a required property"]),
    Case("misspelt-task-key", edit_params(_rename(["tasks", "belebele", "templates"], "templtes")),
         [r"tasks\.belebele\.templtes: unknown key \(did you mean 'templates'\?\)"]),
    Case("misspelt-decoding-key", edit_params(_rename(["decoding", "llama-precise", "temperature"], "temprature")),
         [r"decoding\.llama-precise\.temprature: unknown key \(did you mean 'temperature'\?\)"]),
    Case("misspelt-model-key", edit_params(_rename(["models", "tiny-llama", "batch_size"], "batchsize")),
         [r"models\.tiny-llama\.batchsize: unknown key \(did you mean 'batch_size'\?\)"]),
    Case("wrong-type-seed", edit_params(_set(["seed"], "one")),
         [r"seed: 'one' is not of type 'integer'"]),
    Case("wrong-type-batch-size", edit_params(_set(["models", "tiny-llama", "batch_size"], "8")),
         [r"models\.tiny-llama\.batch_size: '8' is not of type 'integer'"]),
    Case("wrong-type-languages", edit_params(_set(["tasks", "belebele", "languages"], "eng_Latn")),
         [r"tasks\.belebele\.languages: 'eng_Latn' is not of type 'array'"]),
    Case("out-of-range-limit", edit_params(_set(["tasks", "belebele", "limit"], 0)),
         [r"tasks\.belebele\.limit: 0 is less than the minimum of 1"]),
    Case("out-of-range-top-p", edit_params(_set(["decoding", "llama-precise", "top_p"], 1.5)),
         [r"decoding\.llama-precise\.top_p: 1\.5 is greater than the maximum of 1"]),
    Case("empty-grid-no-models", edit_params(_set(["models"], {})),
         [r"models: \{\} should be non-empty"]),
    Case("empty-grid-no-tasks", edit_params(_set(["tasks"], {})),
         [r"tasks: \{\} should be non-empty"]),
    Case("empty-grid-no-languages", edit_params(_set(["tasks", "belebele", "languages"], [])),
         [r"tasks\.belebele\.languages: \[\] should be non-empty"]),
    Case("empty-grid-no-templates", edit_params(_set(["tasks", "belebele", "templates"], [])),
         [r"tasks\.belebele\.templates: \[\] should be non-empty"]),
    Case("empty-params-file", write_text("params.yaml", "# nothing yet\n"),
         [P + r"the file is empty; it must set seed, models, tasks and decoding"]),
    Case("params-not-yaml", write_text("params.yaml", "seed: 1234\nmodels: [tiny-llama\n"),
         [P + r"line 3, column 1: not valid YAML: while parsing a flow sequence expected ',' or '\]'"]),
    Case("data-directory-missing", edit_params(_set(["tasks", "belebele", "source", "path"], "data/belebele")),
         [P + r"tasks\.belebele\.source\.path: directory data/belebele does not exist"]),
    Case("exemplar-language-file-missing",
         lambda wd: (wd / "data/samples/belebele/eng_Latn.jsonl").unlink(),
         [P + r"tasks\.belebele\.languages: no data file for data/samples/belebele/eng_Latn\.jsonl"]),
    Case("undefined-decoding-preset", edit_params(_set(["decoding", "llama-precise"], KeyError)),
         [P + r"tasks\.belebele\.templates: prompts/belebele/blog\.yaml: decoding preset 'llama-precise' is not "
              r"defined under 'decoding' \(defined: greedy\)"]),
    Case("api-key-in-params", edit_params(_set(["models", "tiny-llama", "api_key"], "sk-in-the-config")),
         [r"models\.tiny-llama\.api_key: unknown key"], hidden=["sk-in-the-config"]),  # refused, not echoed
    Case("api-key-variable-unset",
         edit_params(_add_model("api", {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                                        "chat": True, "api_key_env": "BABELEVAL_NEVER_SET_KEY"})),
         [P + r"models\.api\.api_key_env: the environment variable BABELEVAL_NEVER_SET_KEY is not set or empty"]),
    Case("chat-without-a-chat-template", edit_params(_set(["models", "tiny-llama", "chat"], True)),
         [P + r"models\.tiny-llama\.chat: true, but the tokenizer of builtin tiny-llama has no chat template"]),
    Case("model-task-not-in-the-grid", edit_params(_set(["models", "tiny-llama", "tasks"], ["jnli"])),
         [P + r"models\.tiny-llama\.tasks: task 'jnli' is not in the grid's tasks \(belebele\)"]),
    Case("sample-all-on-a-large-family",
         edit_params(_set(["tasks", "belebele", "variants"], {"formatspread": {"sample": "all"}})),
         [P + r"tasks\.belebele\.variants\.formatspread: sample: all would evaluate 5,184 variants"]),
]


@pytest.fixture(scope="module")
def pristine_dir(tmp_path_factory):
    return pristine(tmp_path_factory)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_params(case, pristine_dir, tmp_path):
    workdir = fresh_copy(pristine_dir, tmp_path)
    case.breaks(workdir)
    plan_broken(workdir, case)


@pytest.mark.slow
@pytest.mark.workflow
def test_the_workflow_stops_where_the_plan_does(pristine_dir, tmp_path):
    """The witness: Snakemake, run for real on one case, stops on the message the in-process plan gives."""
    witness(CASES, "api-key-in-params", pristine_dir, tmp_path)  # a key in the file: not printed by Snakemake either
