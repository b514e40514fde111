"""Every task and every template file renders on the bundled samples through a validated grid."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from babeleval.grid.params import load_schema, validate
from babeleval.core.errors import ConfigError
from babeleval.prompts.render import build_requests
from babeleval.tasks import TASKS, get_task
from babeleval.prompts.templates import available_templates

from conftest import TINY_GRID

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = {
    "belebele": ["eng_Latn", "jpn_Jpan"], "jcommonsenseqa": ["jpn_Jpan"], "jnli": ["jpn_Jpan"], "marc_ja": ["jpn_Jpan"],
    "jsquad": ["jpn_Jpan"], "translation_from": ["jpn_Jpan", "hin_Deva"], "translation_to": ["jpn_Jpan", "hin_Deva"],
    "topic_classification": ["eng_Latn", "jpn_Jpan", "hin_Deva"], "sib200": ["eng_Latn", "jpn_Jpan"],
    "mmlu": ["eng_Latn", "jpn_Jpan", "hin_Deva"], "arc": ["eng_Latn", "swh_Latn"], "truthfulqa": ["eng_Latn", "swh_Latn"],
    "mgsm": ["eng_Latn", "jpn_Jpan"],
}
PATHS = {"translation_from": "flores_plus", "translation_to": "flores_plus", "topic_classification": "flores_plus"}


def full_grid() -> dict:
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"] = {
        task: {"languages": languages, "templates": available_templates(task, ROOT),
               "source": {"kind": "local", "path": f"data/samples/{PATHS.get(task, task)}"}}
        for task, languages in LANGUAGES.items()
    }
    return params


def test_schema_lists_every_task():
    assert load_schema()["properties"]["tasks"]["propertyNames"]["enum"] == list(TASKS)  # derived from the registry
    assert set(LANGUAGES) | {"jaquad"} == set(TASKS)


def test_every_template_of_every_task_renders_on_the_samples():
    grid = validate(full_grid(), root=ROOT)
    count = 0
    for name, spec in grid.tasks.items():
        task = get_task(name)
        for language in spec.languages:
            items = task.load(spec.source, language, root=ROOT, options=spec.options)
            for template_name, template in spec.templates.items():
                pool_language = template.fewshot.language or language
                pool = (task.load(spec.source, pool_language, root=ROOT, part="fewshot", options=spec.options)
                        if task.FEWSHOT_PART else task.load(spec.source, pool_language, root=ROOT, options=spec.options))
                plan = grid.prompt_record(name, language, template_name).fewshot
                requests = build_requests(template, items, pool, fewshot=plan, seed=grid.seed, limit=3,
                                          shuffle_seed=task.EVAL_SHUFFLE_SEED)
                assert requests and all(r["prompt"] for r in requests)
                count += len(requests)
    assert count > 100


def test_default_grid_covers_every_task_family():
    grid = validate(yaml.safe_load(TINY_GRID.read_text(encoding="utf-8")), root=ROOT)
    families = {get_task(name).FAMILY for name in grid.tasks}
    assert families == {"multiple_choice", "classification", "extractive_qa", "translation", "math"}
    modes = {(get_task(n).FAMILY, t.mode) for n, s in grid.tasks.items() for t in s.templates.values()}
    assert ("multiple_choice", "loglikelihood") in modes and ("multiple_choice", "generate") in modes
    assert ("classification", "loglikelihood") in modes and ("classification", "generate") in modes


def test_task_options_are_checked():
    params = full_grid()
    params["tasks"]["mmlu"]["partner"] = "eng_Latn"
    with pytest.raises(ConfigError, match="tasks.mmlu: unknown key partner .*task 'mmlu' takes none"):
        validate(params, root=ROOT)
    params = full_grid()
    params["tasks"]["translation_to"]["partner"] = "yor_Latn"
    with pytest.raises(ConfigError, match=r"tasks.translation_to.languages: .*no FLORES\+ dev file for language 'yor_Latn'"):
        validate(params, root=ROOT)


def test_language_a_dataset_lacks_stops_at_start_up():
    params = full_grid()
    params["tasks"]["jnli"]["languages"] = ["eng_Latn"]
    with pytest.raises(ConfigError, match="task 'jnli' has no language 'eng_Latn'"):
        validate(params, root=ROOT)
    params = full_grid()
    params["tasks"]["mgsm"]["languages"] = ["hin_Deva"]
    with pytest.raises(ConfigError, match="MGSM has no language 'hin_Deva'"):
        validate(params, root=ROOT)


def test_a_template_that_does_not_fit_the_task_stops_at_start_up(tmp_path):
    import shutil

    for name in ("prompts", "data"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("prepared"))
    shutil.copy(ROOT / "prompts/mmlu/en_zeroshot.yaml", tmp_path / "prompts/mgsm/letters.yaml")
    params = full_grid()
    params["tasks"] = {"mgsm": {**params["tasks"]["mgsm"], "templates": ["letters"]}}
    with pytest.raises(ConfigError, match="parser 'final_letter' reads a letter; a math task needs one that reads number"):
        validate(params, root=tmp_path)
