"""Checks made once while the run is planned, before any job: every local data file the grid reads is read,
and each template is rendered on a real item, so a broken row or a misspelt variable stops the run here; each
model's environment and tokenizer have what its entry asks for (an API key's variable, a chat template).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

from ..core import paths
from ..core.errors import ConfigError, DataError, MachineError
from ..generate import gguf
from ..generate.backends.config import APIConfig, LocalConfig
from ..generate.builtin_models import get_builtin
from ..generate.preflight import check_response_caches
from ..prompts.fewshot import check_pool
from ..prompts.record import PromptRecord
from ..prompts.render import check_query, continuations, prompt_variables, target_variables
from ..tasks import get_task
from ..tasks.base import EVAL, is_local
from .records import Grid


def local_parts(languages: tuple[str, ...], records: list[PromptRecord]) -> list[tuple[str, str]]:
    """(language, part) of every data file a task's combinations read, as their prompt records say:
    the evaluated rows of each language, then the exemplar pools."""
    parts = {(language, EVAL): None for language in languages}
    for record in records:
        parts.update(dict.fromkeys(record.reads()))
    return list(parts)


def check_local_data(grid: Grid, root: str | Path = ".") -> dict[tuple[str, str], int]:
    """Read every local data file the grid uses, and render each template on a real item.

    Called once at start-up by the workflow (before any job, so before any model
    is built or loaded): a broken row, an empty file or invalid UTF-8 in a local
    dataset, and a template that names a variable the items do not have, stop the
    run here with the file and the row, line or key. Hub datasets cannot be read
    without a download; their rows are checked by the prepare_data job, which every
    generation job of that task waits for. Returns the items of each local (task, language) read.
    """
    counts: dict[tuple[str, str], int] = {}
    for task in grid.tasks.values():
        if not is_local(task.source):
            continue
        loader = get_task(task.name)
        first_item = None
        pools: dict[tuple[str, str], int] = {}  # rows exemplars can be drawn from, per (language, part)
        records = [record for key, record in grid.prompts.items() if key[0] == task.name]
        for language, part in local_parts(task.languages, records):
            items = loader.load(task.source, language, root, part=part, options=task.options)  # DataError: file, row
            if part == EVAL:
                first_item = first_item or (items[0] if items else None)
                counts[task.name, language] = len(items)
            pools[language, part] = len(items)
        if first_item is None:
            raise DataError(f"{grid.source_file}: tasks.{task.name}: the local data has no items")
        for name, template in task.templates.items():
            plans = {(lang, record.exemplar_part): record.fewshot for record in records if record.template == name
                     for lang in record.exemplar_languages}
            for (language, part), fewshot in sorted(plans.items()):
                check_pool(template.path, fewshot, pools[language, part], f"{task.name} {language}")
            # Strict undefined variables: a misspelt field fails here, naming the template file and key.
            variables = prompt_variables(first_item, template)
            template.render_preamble(variables)
            check_query(template, template.render_prompt(variables), first_item["id"])
            template.render_target(target_variables(first_item, template))
            if template.mode == "loglikelihood" and "choices" in first_item:
                continuations(template, first_item)
    return counts


def check_caches(grid: Grid, root: str | Path = ".") -> None:
    """Each model's response cache, where one exists, can be opened (``babeleval.generate.preflight``)."""
    check_response_caches(grid.models if grid.cache_enabled else (), paths.CACHE, root)


def check_api_keys(grid: Grid, environ: dict[str, str] | None = None) -> None:
    """Every API model that runs something finds its key's environment variable set (its name only is said)."""
    environ = os.environ if environ is None else environ
    for name, config in grid.models.items():
        env = getattr(config, "api_key_env", None)
        if isinstance(config, APIConfig) and env and not environ.get(env) and grid.runs_something(name):
            raise MachineError(f"{grid.source_file}: models.{name}.api_key_env: the environment variable {env} is "
                               "not set or empty: export it with the API key before running (or remove api_key_env "
                               "for a server without authentication)")


# files of a saved tokenizer that hold its chat template (transformers: in the config, or beside it since 4.43)
CHAT_TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")


def has_chat_template(model_dir: Path) -> bool | None:
    """Whether the tokenizer saved in ``model_dir`` has a chat template; None where its files cannot tell."""
    if any((model_dir / name).is_file() for name in CHAT_TEMPLATE_FILES):
        return True
    config_file = model_dir / "tokenizer_config.json"
    if not config_file.is_file():
        return None
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # the job's own load says what is wrong with it
    return bool(config.get("chat_template"))


def check_chat_templates(grid: Grid, root: str | Path = ".") -> None:
    """``chat: true`` on a local model whose tokenizer has no chat template (and no ``chat_template`` file in
    its entry) stops here, before any model loads: checked where the tokenizer's files are on disk (a local
    directory), as the builtin model declares it, from a GGUF file's header (``check_gguf_sources``); a hub id is
    checked when its job loads it."""
    for name, config in grid.models.items():
        if not (isinstance(config, LocalConfig) and config.chat and not config.chat_template):
            continue
        if config.builtin is not None:
            found = get_builtin(config.builtin).has_chat_template
        elif config.gguf_source() is not None:
            continue  # in the file's header: check_gguf_sources
        elif Path(root, config.model).is_dir():
            found = has_chat_template(Path(root, config.model))
        else:
            continue
        if found is False:
            raise _no_chat_template(grid, name, config.model or 'builtin ' + str(config.builtin))


def _no_chat_template(grid: Grid, name: str, model: str) -> ConfigError:
    return ConfigError(f"{grid.source_file}: models.{name}.chat: true, but the tokenizer of {model} has no chat "
                       "template: give one with chat_template: <path to a Jinja file> in the entry, or set chat: "
                       "false (prompts are then sent as plain text)")


def check_gguf_sources(grid: Grid, root: str | Path = ".") -> None:
    """Every GGUF file the grid converts is one transformers can read (its header: the architecture, the tensor
    types), ``gguf`` and ``accelerate`` are installed, no two files would convert into one folder, and a chat
    model's file carries a chat template; before any job, so before a conversion of minutes fails."""
    converted: dict[str, str] = {}
    for name, config in grid.models.items():
        source = config.gguf_source() if isinstance(config, LocalConfig) and grid.runs_something(name) else None
        if source is None:
            continue
        where = f"{grid.source_file}: models.{name}.model"
        if importlib.util.find_spec("accelerate") is None:
            raise MachineError(f"{where}: loading a GGUF file needs the 'accelerate' package: "
                               "pip install 'babeleval[hf]', or pip install gguf accelerate")
        path = Path(root) / Path(source).expanduser()
        folder = config.model_path()
        if converted.setdefault(folder, str(path.resolve())) != str(path.resolve()):
            raise ConfigError(f"{where}: {source} and {converted[folder]} share a file name, so both would convert "
                              f"into {folder}: rename one of them")
        header = gguf.check(path, where)
        if config.chat and not config.chat_template and not header.has_chat_template:
            raise _no_chat_template(grid, name, source)
