"""A task entry of params.yaml, checked against the repository: its options, its templates, its data files.

Every message names the params file and the key; a template's names the template file too.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..core.errors import BabelevalError, ConfigError, TemplateError
from ..generate.backends import get_backend
from ..generate.backends.config import ModelConfig
from ..prompts.answer_slot import HOLDS
from ..prompts.templates import Template, load_template
from .variants import budget_plans, check_variant, grid_template_names
from ..score.metrics import METRICS, can_report, is_metric, reportable
from ..score.parsers import PARSERS, get_parser
from ..tasks import Task, get_task
from ..tasks.base import is_local
from ..tasks.lmeval import LmevalTask
from ..tasks.lmeval_catalogue import lmeval_version
from ..tasks.families import Family, get_family
from .checks import local_parts
from .records import TaskEntry
from .resolve import prompt_record

# keys every task entry takes; a task's own keys are its OPTIONS
COMMON_TASK_KEYS = {"languages", "templates", "source", "limit", "variants", "resources"}
# (an lmeval entry's ``lmeval`` key is its task's one option: babeleval.tasks.lmeval)


def task_entry(name: str, entry: dict, params: dict, source_file: str, root: str | Path) -> TaskEntry:
    """A task entry of params.yaml checked and completed: its options, templates, source and data files."""
    task = get_task(name)
    allowed = set(task.OPTIONS)
    given = {key: entry[key] for key in entry if key not in COMMON_TASK_KEYS}
    unknown = sorted(set(given) - allowed)
    if unknown:
        hint = f"; task '{name}' takes: {', '.join(sorted(allowed))}" if allowed else f"; task '{name}' takes none"
        raise ConfigError(f"{source_file}: tasks.{name}: unknown key{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(unknown)} (common keys: {', '.join(sorted(COMMON_TASK_KEYS))}{hint})")
    options = {**task.OPTIONS, **given}
    if isinstance(task, LmevalTask):  # its prompts are lm-eval's: what it evaluates and reports is planned there
        plan = task.check(entry, f"{source_file}: tasks.{name}")
        options["lmeval_version"] = lmeval_version()  # in the preparing rule's params: an upgrade re-renders
    templates = checked_templates(task, entry, params, source_file, root)
    if isinstance(task, LmevalTask):
        templates = {key: replace(template, metrics=plan.metrics) for key, template in templates.items()}

    source = entry["source"]
    if is_local(source):
        data_dir = Path(root) / source["path"]
        if not data_dir.is_dir():
            raise ConfigError(f"{source_file}: tasks.{name}.source.path: directory {data_dir} does not exist")
    metric_options = {}
    if params.get("metrics", {}).get("flores200_spm"):
        metric_options["spm_model"] = str(Path(root) / params["metrics"]["flores200_spm"])
    checked = TaskEntry(name=name, languages=tuple(entry["languages"]), templates=templates, source=source,
                        limit=entry.get("limit"), options=options, metric_options=metric_options,
                        budgets=budget_plans(name, get_family(task.FAMILY), entry, templates, params["seed"],
                                             source_file))
    if is_local(source):
        missing = []
        records = [prompt_record(checked, template, language, params["seed"])
                   for language in checked.languages for template in templates]
        for language, part in sorted(local_parts(checked.languages, records), key=lambda pair: pair[0]):
            try:
                files = task.files(source, language, root, part=part, options=options)
            except BabelevalError as exc:
                raise ConfigError(f"{source_file}: tasks.{name}.languages: {exc}") from None
            missing += [p for p in files if not Path(p).is_file()]
        if missing:
            raise ConfigError(f"{source_file}: tasks.{name}.languages: no data file for "
                              f"{', '.join(str(p) for p in dict.fromkeys(missing))}")
    return checked


def checked_templates(task: Task, entry: dict, params: dict, source_file: str, root: str | Path
                      ) -> dict[str, Template]:
    """A task entry's templates (sampled variants included), each checked against the task's family,
    the parsers and the decoding presets."""
    name = task.NAME
    templates = {}
    for template_name in grid_template_names(name, entry, params["seed"], source_file, root):  # + sampled variants
        try:
            template = load_template(name, template_name, root)
        except TemplateError as exc:
            raise ConfigError(f"{source_file}: tasks.{name}.templates: {exc}") from None
        where = f"{source_file}: tasks.{name}.templates: {template.path}"
        if template.mode == "generate" and get_family(task.FAMILY).parser_kinds:
            if template.parser not in PARSERS:
                raise ConfigError(f"{where}: {PARSERS.unknown(template.parser)}")
        problem = check_template(get_family(task.FAMILY), template)
        if problem:
            raise ConfigError(f"{where}: {problem}")
        if template.mode == "generate":
            if template.generation.decoding not in params["decoding"]:
                raise ConfigError(f"{where}: decoding preset '{template.generation.decoding}' is not defined under "
                                  f"'decoding' (defined: {', '.join(params['decoding'])})")
        check_variant(template, task.FAMILY, entry["languages"], where)
        templates[template_name] = template
    return templates


def check_template(family: Family, template: Template) -> str | None:
    """Why a template cannot serve a task of this family, or None."""
    if template.mode not in family.modes:
        return f"a {family.name} task cannot be scored in mode '{template.mode}'"
    if template.mode == "generate" and family.parser_kinds:  # else the task's own rules read its replies
        parser = get_parser(template.parser)
        kind = parser.kind
        if kind not in family.parser_kinds:
            return (f"parser '{template.parser}' reads a {kind}; a {family.name} task needs one that reads "
                    f"{' or '.join(family.parser_kinds)}")
        own_labels = template.labels is not None or (template.variant is not None
                                                      and template.variant.get("enum") != "upper")
        if template.answer_slot is not None and HOLDS[template.answer_slot.holds] != kind:
            return (f"answer_slot holds {template.answer_slot.holds}, which parser '{template.parser}' (a {kind} "
                    f"parser) does not read (it reads: {', '.join(h for h, k in HOLDS.items() if k == kind) or 'text'})")
        if kind == "letter" and own_labels and not parser.reads_labels:
            return (f"parser '{template.parser}' reads only the letters A, B, C ...; the template's own choice labels "
                    "need a parser that reads them (final_letter, hash_letter)")
    return check_metrics(family, template.mode, template.metrics or ())


def check_metrics(family: Family, mode: str, names: tuple[str, ...]) -> str | None:
    """Why a template of a ``family`` task scored in ``mode`` cannot list the metrics ``names``, or None: each
    must be a metric of the registry that applies to the family and mode (``babeleval.score.metrics``)."""
    known = sorted(name for name, metric in METRICS.items() if metric.reported)
    unknown = [name for name in names if not is_metric(name)]
    if unknown:
        return (f"unknown metric{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (known: {', '.join(known)}; "
                "a metric of your own is registered in a file params.yaml lists under modules)")
    allowed = reportable(family, mode)
    wrong = [name for name in names if not can_report(name, family, mode)]
    if wrong:
        return (f"metric{'s' if len(wrong) > 1 else ''} {', '.join(wrong)} cannot be computed for a {family.name} task "
                f"in mode '{mode}' (it can report: {', '.join(allowed)})")
    return None


def check_extractors(tasks: dict[str, TaskEntry], models: dict[str, ModelConfig], entries: dict[str, dict],
                     source_file: str) -> None:
    """Every template's ``extractor`` names a model of the grid that can generate text (its backend answers
    generate templates), and a model that runs no task (``tasks: []``) is some template's extractor: a misspelt
    name stops the run here, before any model loads."""
    named = {t.extractor for task in tasks.values() for t in task.templates.values()}
    for name, entry in entries.items():
        if entry.get("tasks") == [] and name not in named:
            raise ConfigError(f"{source_file}: models.{name}.tasks: an empty list runs no task, and no template of "
                              "the grid names this model as its extractor: it would do nothing (name it in a "
                              "template's `extractor:`, or give it tasks)")
    for task in tasks.values():
        for template in task.templates.values():
            name = template.extractor
            if name is None:
                continue
            where = f"{source_file}: tasks.{task.name}.templates: {template.path}: extractor"
            if name not in models:
                raise ConfigError(f"{where}: '{name}' is not a model of {source_file} (models: "
                                  f"{', '.join(sorted(models))}); name one of them, or add its entry under models")
            why = get_backend(models[name].backend).unsupported_modes(models[name]).get("generate")
            if why:
                raise ConfigError(f"{where}: model '{name}' cannot generate the extraction's reply: {why}")
