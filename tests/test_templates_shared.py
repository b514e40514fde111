"""Templates shared across tasks of one family: ``use: <task>/<name>``, so no two files under prompts/ repeat a body."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
import yaml

from babeleval.core.errors import TemplateError
from babeleval.prompts.render import build_requests
from babeleval.tasks import TASKS, get_task
from babeleval.prompts.templates import available_templates, load_template
from babeleval.prompts.variants import input_files
from resolved_record import prompt_record_for

# what a file that uses another task's template says for itself; everything else is the used template's
OWN = {"task", "name", "path", "sha256", "uses", "description", "reference"}


def prompt_files(root):
    for task in TASKS:
        for name in available_templates(task, root):
            yield task, name, yaml.safe_load((root / "prompts" / task / f"{name}.yaml").read_text(encoding="utf-8"))


def test_no_two_template_files_share_a_body(repo_root):
    bodies: dict[str, str] = {}
    for task, name, spec in prompt_files(repo_root):
        if "use" in spec:
            continue
        body = yaml.safe_dump({k: v for k, v in spec.items() if k not in ("description", "reference")}, sort_keys=True)
        assert body not in bodies, f"{task}/{name} repeats {bodies[body]}: give it 'use: {bodies[body]}'"
        bodies[body] = f"{task}/{name}"


def test_a_template_that_uses_another_is_that_template_with_its_own_description(repo_root):
    using = [(task, name, spec["use"]) for task, name, spec in prompt_files(repo_root) if "use" in spec]
    assert {task for task, _, _ in using} == {"jaquad", "arc", "sib200", "translation_from"} and len(using) == 9
    for task, name, ref in using:
        template, used = load_template(task, name, repo_root), load_template(*ref.split("/"), repo_root)
        assert template.uses == used.path and str(used.path) in input_files(template)
        assert get_task(task).FAMILY == get_task(used.task).FAMILY
        for field in dataclasses.fields(template):
            if field.name not in OWN:
                assert getattr(template, field.name) == getattr(used, field.name), (task, name, field.name)
        assert template.description and template.reference and template.sha256 != used.sha256


def test_jaquad_renders_the_jsquad_prompts_byte_for_byte(repo_root):
    spec = {"kind": "local", "path": "data/samples/jsquad"}
    items = get_task("jsquad").load(spec, "jpn_Jpan", root=repo_root)
    pool = get_task("jsquad").load(spec, "jpn_Jpan", root=repo_root, part="fewshot")
    for version in ("0.1", "0.2", "0.3", "0.4", "0.5", "0.6"):
        jaquad, jsquad = (build_requests(load_template(task, version, repo_root), items, pool, seed=7, limit=3,
                                         fewshot=prompt_record_for(task, "jpn_Jpan", version, repo_root).fewshot)
                          for task in ("jaquad", "jsquad"))
        assert [r["prompt"] for r in jaquad] == [r["prompt"] for r in jsquad] and jaquad


@pytest.fixture
def prompts(tmp_path, repo_root):
    shutil.copytree(repo_root / "prompts", tmp_path / "prompts")
    return tmp_path


def test_editing_the_used_template_changes_the_hash_of_the_one_that_uses_it(prompts):
    before = load_template("sib200", "en_zeroshot", prompts).sha256
    used = prompts / "prompts/topic_classification/en_zeroshot.yaml"
    used.write_text(used.read_text(encoding="utf-8").replace("Reply with only the topic name.", "Answer with the topic name only."), encoding="utf-8")
    after = load_template("sib200", "en_zeroshot", prompts)
    assert after.sha256 != before and after.prompt == load_template("topic_classification", "en_zeroshot", prompts).prompt


@pytest.mark.parametrize("text, message", [
    ("use: jnli/0.2\n", r"jaquad/0\.2\.yaml: 'use: jnli/0\.2': a classification template cannot serve a "
                        r"extractive_qa task"),
    ("use: jsquad/0.1\nprompt: 'x'\n", r"jaquad/0\.2\.yaml: unknown key 'prompt' in a template that uses another "
                                        r"\(allowed: description, reference, use\)"),
    ("use: jsquad\n", r"jaquad/0\.2\.yaml: 'use' must name another task's template as <task>/<name>"),
    ("use: nosuchtask/0.1\n", r"jaquad/0\.2\.yaml: 'use' must name another task's template"),
    ("use: jaquad/0.2\n", r"jaquad/0\.2\.yaml: 'use' must name another task's template"),  # itself
    ("use: jsquad/9.9\n", r"prompts/jsquad/9\.9\.yaml: no template '9\.9' for task 'jsquad'"),
])
def test_a_bad_use_is_a_named_template_error(prompts, text, message):
    (prompts / "prompts/jaquad/0.2.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(TemplateError, match=message):
        load_template("jaquad", "0.2", prompts)


def test_a_used_template_may_not_use_another_itself(prompts):
    (prompts / "prompts/jsquad/0.3.yaml").write_text("use: jaquad/0.1\n", encoding="utf-8")
    with pytest.raises(TemplateError, match=r"prompts/jaquad/0\.3\.yaml: 'use: jsquad/0\.3': .*jsquad/0\.3\.yaml uses "
                                            r"another template itself"):
        load_template("jaquad", "0.3", prompts)
