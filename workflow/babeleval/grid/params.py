"""params.yaml: the single source of the experiment grid, validated before any job runs.

Validation has two layers: the JSON schema in ``workflow/schemas/`` (keys,
types, ranges), then checks that need the repository (templates exist and
load, parsers and decoding presets exist, local data files are present). Every
message names the file and the key.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from ..core.errors import BabelevalError, ConfigError, DataError, TemplateError
from ..score.parsers import PARSERS, get_parser
from ..generate.backends import BACKENDS, model_config, model_settings
from ..generate.backends.config import ModelConfig
from ..generate.preflight import check_model_location
from .records import CombinationSpec, PromptSpec, prompt_spec, resolve
from ..core import extensions
from ..tasks import TASKS, get_task
from ..tasks.families import Family, get_family
from ..prompts.templates import Template, load_template

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "params.schema.yaml"


@dataclass(frozen=True)
class TaskSpec:
    name: str
    languages: tuple[str, ...]
    templates: dict[str, Template]
    source: dict[str, Any]
    limit: int | None
    options: dict[str, Any] = None  # task-specific keys (translation's partner, topics' count), defaults filled in
    metric_options: dict[str, Any] = None  # settings metrics need (the FLORES-200 SentencePiece model path)


@dataclass(frozen=True)
class Grid:
    seed: int
    models: dict[str, ModelConfig]  # each entry typed by its backend (babeleval.generate.backends.config)
    tasks: dict[str, TaskSpec]
    decoding: dict[str, dict[str, Any]]
    cache_enabled: bool
    source_file: str
    # the resolved records (babeleval.spec): (task, language, template) -> PromptSpec,
    # (model, task, language, template) -> CombinationSpec
    prompts: dict[tuple[str, str, str], PromptSpec] = field(default_factory=dict)
    specs: dict[tuple[str, str, str, str], CombinationSpec] = field(default_factory=dict)

    def spec(self, model: str, task: str, language: str, template: str) -> CombinationSpec:
        return self.specs[model, task, language, template]

    def prompt_spec(self, task: str, language: str, template: str) -> PromptSpec:
        return self.prompts[task, language, template]

    def combinations(self):
        """Every (model, task, language, template) the grid asks for, in a stable order."""
        for model in self.models:
            for task in self.tasks.values():
                for language in task.languages:
                    for template in task.templates:
                        yield model, task.name, language, template


def read_params_file(path: str | Path = "params.yaml") -> dict[str, Any]:
    """The mapping in params.yaml; a file that is missing, not UTF-8, not YAML or not a mapping stops here.

    The workflow calls this before Snakemake's ``configfile:`` reads the file, whose own
    message names neither the file nor the line.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}: line {line}: not valid UTF-8") from None
    try:
        params = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = " ".join(filter(None, [getattr(exc, "context", None), getattr(exc, "problem", None)])) or str(exc)
        raise ConfigError(f"{path}: {where}not valid YAML: {problem}") from None
    if params is None:
        raise ConfigError(f"{path}: the file is empty; it must set seed, models, tasks and decoding")
    if not isinstance(params, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level (seed, models, tasks, decoding), "
                          f"got {type(params).__name__}")
    return params


def load_params(path: str | Path = "params.yaml", root: str | Path = ".") -> Grid:
    return validate(read_params_file(path), source_file=str(path), root=root)


def _key_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(top level)"


def _describe(error: jsonschema.ValidationError) -> list[str]:
    where = _key_path(error)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        prefix = "" if where == "(top level)" else f"{where}."
        lines = []
        for key in sorted(set(error.instance) - set(allowed)):
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            lines.append(f"{prefix}{key}: unknown key{hint}; allowed here: {', '.join(allowed)}")
        return lines
    if "api_key" in where:  # the value may be a key pasted in by mistake: never echo it
        return [f"{where}: must be the name of an environment variable (capitals, digits, _), e.g. OPENAI_API_KEY; "
                "the key itself never goes in params.yaml"]
    return [f"{where}: {error.message}"]


def load_schema() -> dict[str, Any]:
    """The params.yaml schema, with the task and backend names of the registries (extension files' included);
    a setting an extension backend declares is a model key too (its config checks its value)."""
    schema = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
    schema["properties"]["tasks"]["propertyNames"] = {"enum": list(TASKS)}
    model = schema["properties"]["models"]["additionalProperties"]
    model["properties"]["backend"]["enum"] = list(BACKENDS)
    for name in model_settings():
        model["properties"].setdefault(name, {})
    return schema


# params.yaml keys listing extension files (babeleval.core.extensions); task_modules is the older name
EXTENSION_KEYS = ("modules", "task_modules")


def load_extensions(params: dict, source_file: str, root: str | Path) -> None:
    """Load the extension files params.yaml lists, before the schema is checked: the names of the tasks and
    backends they define are part of it."""
    for key in EXTENSION_KEYS:
        paths = params.get(key)
        if isinstance(paths, list) and all(isinstance(path, str) for path in paths):  # else the schema says why
            try:
                extensions.load_files(paths, root, key)
            except ConfigError as exc:
                raise ConfigError(f"{source_file}: {exc}") from None


def validate(params: Any, source_file: str = "params.yaml", root: str | Path = ".") -> Grid:
    if not isinstance(params, dict):
        raise ConfigError(f"{source_file}: expected a mapping at the top level, got {type(params).__name__}")
    load_extensions(params, source_file, root)
    schema = load_schema()
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(params), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        described = [line for error in errors for line in _describe(error)]
        lines = "\n  ".join(described[:10])
        more = f"\n  ... and {len(described) - 10} more" if len(described) > 10 else ""
        raise ConfigError(f"{source_file}: invalid configuration:\n  {lines}{more}")

    models = {name: _model(name, entry, source_file, root) for name, entry in params["models"].items()}
    tasks = {name: _task_spec(name, spec, params, source_file, root) for name, spec in params["tasks"].items()}
    prompts, specs = resolve(models, tasks, params["decoding"], params["seed"])
    return Grid(
        seed=params["seed"],
        models=models,
        tasks=tasks,
        decoding=params["decoding"],
        cache_enabled=params.get("cache", {}).get("enabled", True),
        source_file=source_file,
        prompts=prompts,
        specs=specs,
    )


def _model(name: str, entry: dict[str, Any], source_file: str, root: str | Path) -> ModelConfig:
    """A model entry typed by its backend's config, and what it points at checked."""
    try:
        config = model_config(entry)
    except ConfigError as exc:
        raise ConfigError(f"{source_file}: models.{name}: {exc}") from None
    check_model_location(name, config, source_file, root)
    return config


def _task_spec(name: str, spec: dict, params: dict, source_file: str, root: str | Path) -> TaskSpec:
    task = get_task(name)
    allowed = set(task.OPTIONS)
    given = {key: spec[key] for key in spec if key not in _COMMON_TASK_KEYS}
    unknown = sorted(set(given) - allowed)
    if unknown:
        hint = f"; task '{name}' takes: {', '.join(sorted(allowed))}" if allowed else f"; task '{name}' takes none"
        raise ConfigError(f"{source_file}: tasks.{name}: unknown key{'s' if len(unknown) > 1 else ''} "
                          f"{', '.join(unknown)} (common keys: {', '.join(sorted(_COMMON_TASK_KEYS))}{hint})")
    options = {**task.OPTIONS, **given}
    templates = _templates(task, spec, params, source_file, root)

    source = spec["source"]
    if source["kind"] == "local":
        data_dir = Path(root) / source["path"]
        if not data_dir.is_dir():
            raise ConfigError(f"{source_file}: tasks.{name}.source.path: directory {data_dir} does not exist")
    metric_options = {}
    if params.get("metrics", {}).get("flores200_spm"):
        metric_options["spm_model"] = str(Path(root) / params["metrics"]["flores200_spm"])
    task_spec = TaskSpec(
        name=name,
        languages=tuple(spec["languages"]),
        templates=templates,
        source=source,
        limit=spec.get("limit"),
        options=options,
        metric_options=metric_options,
    )
    if source["kind"] == "local":
        missing = []
        records = [prompt_spec(task_spec, template, language, params["seed"])
                   for language in task_spec.languages for template in templates]
        for language, part in sorted(local_parts(task_spec.languages, records), key=lambda pair: pair[0]):
            try:
                files = task.local_files(source, language, root, part=part, options=options)
            except BabelevalError as exc:
                raise ConfigError(f"{source_file}: tasks.{name}.languages: {exc}") from None
            missing += [p for p in files if not Path(p).is_file()]
        if missing:
            raise ConfigError(f"{source_file}: tasks.{name}.languages: no data file for "
                              f"{', '.join(str(p) for p in dict.fromkeys(missing))}")
    return task_spec


def _templates(task, spec: dict, params: dict, source_file: str, root: str | Path) -> dict[str, Template]:
    """A task entry's templates (sampled variants included), each checked against the task's family,
    the parsers and the decoding presets."""
    from ..prompts.variants import check_variant, grid_template_names

    name = task.NAME
    templates = {}
    for template_name in grid_template_names(name, spec, params["seed"], source_file, root):  # + sampled variants
        try:
            template = load_template(name, template_name, root)
        except TemplateError as exc:
            raise ConfigError(f"{source_file}: tasks.{name}.templates: {exc}") from None
        where = f"{source_file}: tasks.{name}.templates: {template.path}"
        if template.mode == "generate":
            if template.parser not in PARSERS:
                raise ConfigError(f"{where}: unknown parser '{template.parser}' (known: {', '.join(sorted(PARSERS))})")
        problem = check_template(get_family(task.FAMILY), template)
        if problem:
            raise ConfigError(f"{where}: {problem}")
        if template.mode == "generate":
            if template.generation.decoding not in params["decoding"]:
                raise ConfigError(f"{where}: decoding preset '{template.generation.decoding}' is not defined under "
                                  f"'decoding' (defined: {', '.join(params['decoding'])})")
        check_variant(template, task.FAMILY, spec["languages"], where)
        templates[template_name] = template
    return templates


def local_parts(languages: tuple[str, ...], records: list[PromptSpec]) -> list[tuple[str, str]]:
    """(language, part) of every data file a task's combinations read, as their prompt records say:
    the evaluated rows of each language, then the exemplar pools."""
    parts = {(language, "eval"): None for language in languages}
    for record in records:
        parts.update({(lang, record.exemplar_part): None for lang in record.exemplar_languages})
    return list(parts)


def check_local_data(grid: Grid, root: str | Path = ".") -> None:
    """Read every local data file the grid uses, and render each template on a real item.

    Called once at start-up by the workflow (before any job, so before any model
    is built or loaded): a broken row, an empty file or invalid UTF-8 in a local
    dataset, and a template that names a variable the items do not have, stop the
    run here with the file and the row, line or key. Hub datasets cannot be read
    without a download; their rows are checked by the prepare_data job, which every
    generation job of that task waits for.
    """
    from ..prompts.fewshot import check_pool
    from ..prompts.render import check_query, continuations, prompt_variables, target_variables

    for task in grid.tasks.values():
        if task.source["kind"] != "local":
            continue
        loader = get_task(task.name)
        first_item = None
        pools: dict[tuple[str, str], int] = {}  # rows exemplars can be drawn from, per (language, part)
        records = [record for key, record in grid.prompts.items() if key[0] == task.name]
        for language, part in local_parts(task.languages, records):
            items = loader.load(task.source, language, root, part=part, options=task.options)  # DataError: file, row
            if part == "eval":
                first_item = first_item or (items[0] if items else None)
            pools[language, part] = len(items)
        if first_item is None:
            raise DataError(f"{grid.source_file}: tasks.{task.name}: the local data has no items")
        for name, template in task.templates.items():
            pool_keys = {(lang, record.exemplar_part) for record in records if record.template == name
                         for lang in record.exemplar_languages}
            for language, part in sorted(pool_keys):
                check_pool(template, pools[language, part], f"{task.name} {language}")
            # Strict undefined variables: a misspelt field fails here, naming the template file and key.
            variables = prompt_variables(first_item, template)
            template.render_preamble(variables)
            check_query(template, template.render_prompt(variables), first_item["id"])
            template.render_target(target_variables(first_item, template))
            if template.mode == "loglikelihood" and "choices" in first_item:
                continuations(template, first_item)


# What a template of a family and mode may report (its ``metrics:``): the defaults and what else the
# family's scored records support. acc_norm needs log-likelihoods; accuracy means nothing for a translation.
_CHOICE_METRICS = {"loglikelihood": ("acc", "acc_norm", "balanced_acc", "macro_f1"),
                   "generate": ("acc", "balanced_acc", "macro_f1", "parse_failure_rate")}
APPLICABLE_METRICS: dict[str, dict[str, tuple[str, ...]]] = {
    "multiple_choice": _CHOICE_METRICS,
    "classification": _CHOICE_METRICS,
    "extractive_qa": {"generate": ("exact_match", "f1", "acc", "parse_failure_rate")},
    "translation": {"generate": ("bleu", "chrf", "parse_failure_rate")},
    "math": {"generate": ("acc", "parse_failure_rate")},
}


def check_template(family: Family, template: Template) -> str | None:
    """Why a template cannot serve a task of this family, or None."""
    if template.mode not in family.modes:
        return f"a {family.name} task cannot be scored in mode '{template.mode}'"
    if template.mode == "generate":
        kind = get_parser(template.parser).kind
        if kind not in family.parser_kinds:
            return (f"parser '{template.parser}' reads a {kind}; a {family.name} task needs one that reads "
                    f"{' or '.join(family.parser_kinds)}")
    allowed = APPLICABLE_METRICS[family.name][template.mode]
    wrong = [name for name in template.metrics or () if name not in allowed]
    if wrong:
        return (f"metric{'s' if len(wrong) > 1 else ''} {', '.join(wrong)} cannot be computed for a {family.name} task "
                f"in mode '{template.mode}' (it can report: {', '.join(allowed)})")
    return None


_COMMON_TASK_KEYS = {"languages", "templates", "source", "limit", "variants"}
