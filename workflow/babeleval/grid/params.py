"""params.yaml: the single source of the experiment grid, validated before any job runs.

Validation has two layers: the JSON schema in ``workflow/schemas/`` (keys,
types, ranges), then checks that need the repository (templates exist and
load, parsers and decoding presets exist, local data files are present). Every
message names the file and the key.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Mapping

import jsonschema
import yaml

from ..analysis.settings import AnalysisSettings
from ..core import extensions
from ..core.errors import ConfigError
from ..generate.backends import BACKENDS, model_config, model_settings
from ..generate.backends.config import ModelConfig
from ..generate.builtin_models import BUILTINS
from ..generate.preflight import check_model_location
from ..tasks import TASKS, lmeval
from .entries import check_extractors, task_entry
from .language_codes import check_language_codes
from .holes import plan_runs
from .records import Grid
from .resolve import resolve

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "params.schema.yaml"


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
    model["properties"]["builtin"]["enum"] = list(BUILTINS)
    for name in model_settings():
        model["properties"].setdefault(name, {})
    return schema


def analysis_setting_errors(settings: Mapping[str, Any]) -> dict[str, str]:
    """What the schema of params.yaml's ``analysis`` section finds wrong with some of its settings given elsewhere
    (a command line's flags), by params.yaml key: one set of bounds for both."""
    section = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))["properties"]["analysis"]
    errors = jsonschema.Draft202012Validator(section).iter_errors(dict(settings))
    return {str(error.absolute_path[0]): error.message for error in errors if error.absolute_path}


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
    if isinstance(params.get("tasks"), dict):
        try:
            lmeval.register(params["tasks"])
        except ConfigError as exc:
            raise ConfigError(f"{source_file}: {exc}") from None
    schema = load_schema()
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(params), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        described = [line for error in errors for line in _describe(error)]
        lines = "\n  ".join(described[:10])
        more = f"\n  ... and {len(described) - 10} more" if len(described) > 10 else ""
        raise ConfigError(f"{source_file}: invalid configuration:\n  {lines}{more}")

    check_language_codes(params["tasks"], source_file)
    models = {name: _model_config(name, entry, source_file, root) for name, entry in params["models"].items()}
    tasks = {name: task_entry(name, entry, params, source_file, root) for name, entry in params["tasks"].items()}
    check_extractors(tasks, models, params["models"], source_file)
    check_pairs(params.get("analysis", {}).get("local_vs_translated", {}), tasks, source_file)
    runs, omitted = plan_runs(models, params["models"], tasks, source_file)
    outputs, prompts, records = resolve(models, tasks, params["decoding"], params["seed"], runs)
    return Grid(
        seed=params["seed"],
        models=models,
        tasks=tasks,
        decoding=params["decoding"],
        cache_enabled=params.get("cache", {}).get("enabled", True),
        source_file=source_file,
        analysis=AnalysisSettings.from_params(params.get("analysis"), params["seed"]),
        model_outputs=outputs,
        prompts=prompts,
        records=records,
        runs=runs,
        omitted=omitted,
    )


def check_pairs(pairs: dict[str, str], tasks: dict, source_file: str) -> None:
    """``analysis.local_vs_translated``: each translated task and its local counterpart are tasks of the grid that
    share a language (else the comparison would have no rows)."""
    for translated, local in pairs.items():
        where = f"{source_file}: analysis.local_vs_translated.{translated}"
        missing = [name for name in (translated, local) if name not in tasks]
        if missing:
            raise ConfigError(f"{where}: no task {', '.join(missing)} in the grid (tasks: {', '.join(tasks)})")
        if not set(tasks[translated].languages) & set(tasks[local].languages):
            raise ConfigError(f"{where}: {translated} and {local} share no language ({translated}: "
                              f"{', '.join(tasks[translated].languages)}; {local}: {', '.join(tasks[local].languages)})")


def _model_config(name: str, entry: dict[str, Any], source_file: str, root: str | Path) -> ModelConfig:
    """A model entry typed by its backend's config, and what it points at checked."""
    try:
        config = model_config(entry)
    except ConfigError as exc:
        raise ConfigError(f"{source_file}: models.{name}: {exc}") from None
    check_model_location(name, config, source_file, root)
    return config
