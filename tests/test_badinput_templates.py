"""Catalogue of bad inputs, part 2: prompt templates. Each case stops the run at start-up (tests/README.md)."""

import pytest

from badinput_support import Case, edit_template, fresh_copy, plan_broken, pristine, replace_in, witness, write_text

PAPER = "prompts/belebele/paper.yaml"
INSTRUCT = "prompts/belebele/instruct.yaml"
T = r"params\.yaml: tasks\.belebele\.templates: prompts/belebele/"  # load-time problems: the key, then the file


def _drop(key):
    return lambda spec: spec.pop(key)


def _set(key, value):
    def change(spec):
        spec[key] = value
    return change


CASES = [
    Case("undefined-variable", replace_in(PAPER, "{{ passage }}", "{{ pasage }}"),
         [r"prompts/belebele/paper\.yaml: 'prompt': 'pasage' is undefined; variables available: choices, group, "
          r"id, language, letters, passage, question, task"]),
    Case("undefined-variable-in-target", replace_in(PAPER, "{{ answer_letter }}", "{{ answer_leter }}"),
         [r"prompts/belebele/paper\.yaml: 'target': 'answer_leter' is undefined; variables available: .*answer_letter"]),
    Case("syntax-error", replace_in(PAPER, "{{ passage }}", "{{ passage }"),
         [T + r"paper\.yaml: 'prompt' line 1: template syntax error: unexpected '}'"]),
    Case("unclosed-block", replace_in(INSTRUCT, "{{ passage }}", "{% if passage %}{{ passage }}"),
         [T + r"instruct\.yaml: 'prompt' line \d+: template syntax error: Unexpected end of template"]),
    Case("missing-mode", edit_template("paper", _drop("mode")),
         [T + r"paper\.yaml: missing required key 'mode'"]),
    Case("missing-prompt", edit_template("paper", _drop("prompt")),
         [T + r"paper\.yaml: missing required key 'prompt'"]),
    Case("missing-parser", edit_template("instruct", _drop("parser")),
         [T + r"instruct\.yaml: a generate template needs 'parser' \(the name of an answer parser\)"]),
    Case("unknown-parser", edit_template("instruct", _set("parser", "belebele_instrct")),
         [T + r"instruct\.yaml: unknown parser 'belebele_instrct' \(known: .*belebele_instruct"]),
    Case("misspelt-template-key", edit_template("paper", lambda s: s.update(fewshots=s.pop("fewshot"))),
         [T + r"paper\.yaml: unknown key 'fewshots' in the template \(allowed: .*fewshot"]),
    Case("wrong-type-max-new-tokens", edit_template("instruct", lambda s: s["generation"].update(max_new_tokens="10")),
         [T + r"instruct\.yaml: generation\.max_new_tokens must be a whole number >= 1"]),
    Case("template-not-yaml", write_text(PAPER, "mode: loglikelihood\nprompt: [unclosed\n"),
         [T + r"paper\.yaml: not a valid YAML file"]),
    Case("reach-python-internals", replace_in(PAPER, "{{ passage }}", "{{ passage.__class__.__mro__[1].__subclasses__() }}"),
         [r"prompts/belebele/paper\.yaml: 'prompt' tried something templates may not do: access to attribute "
          r"'__class__' of 'str' object is unsafe"]),
    Case("reach-globals-to-run-code",
         replace_in(PAPER, "{{ passage }}", "{{ namespace.__init__.__globals__['os'].system('touch pwned') }}"),
         [r"prompts/belebele/paper\.yaml: 'prompt' tried something templates may not do: access to attribute "
          r"'__init__' of 'type' object is unsafe"], absent=["pwned"]),
    Case("read-a-file", replace_in(PAPER, "{{ passage }}", "{% include '/etc/passwd' %}"),
         [T + r"paper\.yaml: 'prompt' line 1: templates may not include, import or extend other files"]),
    Case("import-a-file", replace_in(INSTRUCT, "{{ passage }}", "{% from '/etc/hostname' import x %}{{ x }}"),
         [T + r"instruct\.yaml: 'prompt' line \d+: templates may not include, import or extend other files"]),
    Case("exhaust-memory", replace_in(PAPER, "{{ passage }}", "{{ passage * 10 ** 9 }}"),
         [r"prompts/belebele/paper\.yaml: 'prompt' tried something templates may not do: '\*' would build a "
          r"sequence longer than 100000"]),
    Case("hang-planning-with-nested-loops",
         replace_in(PAPER, "{{ passage }}",
                    "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}{{ passage }}"),
         [r"prompts/belebele/paper\.yaml: 'prompt' hit the time limit \(2 s of CPU time per render\)"]),
    Case("exhaust-memory-with-a-format-width", replace_in(PAPER, "{{ passage }}", "{{ passage|center(10 ** 9) }}"),
         [r"prompts/belebele/paper\.yaml: 'prompt' hit the output-size limit \(100000 characters\): the center "
          r"filter with the number 1000000000"]),
    Case("mutate-the-item", replace_in(PAPER, "{{ passage }}", "{{ choices.clear() }}{{ passage }}"),
         [r"prompts/belebele/paper\.yaml: 'prompt' tried something templates may not do: access to attribute "
          r"'clear' of 'list' object is unsafe"]),
]


@pytest.fixture(scope="module")
def pristine_dir(tmp_path_factory):
    return pristine(tmp_path_factory)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_template(case, pristine_dir, tmp_path):
    workdir = fresh_copy(pristine_dir, tmp_path)
    case.breaks(workdir)
    plan_broken(workdir, case)


@pytest.mark.slow
@pytest.mark.workflow
def test_the_workflow_stops_where_the_plan_does(pristine_dir, tmp_path):
    """The witness: Snakemake, run for real on one case, stops on the message the in-process plan gives."""
    witness(CASES, "undefined-variable", pristine_dir, tmp_path)
