"""An lm-evaluation-harness task as a babeleval task: ``lmeval: <task or group>`` in a params.yaml task entry.

::

    tasks:
      include:
        lmeval: include_base_44            # an lm-eval 0.4 task, group or tag
        languages: [sqi_Latn, jpn_Jpan]    # a per-language group's members, matched by name
        templates: [include_base_44]       # its one template, named after it
        source: {kind: local, path: data/samples/lmeval/include}
        # or the hub at a pinned revision: {kind: hf, dataset: CohereForAI/include-base-44, revision: <commit>}

The documents, ``doc_to_text``/``doc_to_choice``/``doc_to_target``, few-shot settings and target delimiter are
lm-eval's: each document is rendered by lm-eval itself (``Task.build_all_requests``, the path its evaluator
takes) and becomes an item holding that context and those continuations; the template
``prompts/lmeval/multiple_choice.yaml`` passes them through unchanged. A ``generate_until`` task's document becomes
an item holding the context and its reference; ``prompts/lmeval/generate_until.yaml`` passes the context through
with the task's ``generation_kwargs`` as its generation settings (``LmevalTask.template_settings``), and its reply
is read by the task's filters (``babeleval.score.lmeval_filters``). What is planned at start-up (group
expansion, refusals, metrics) is ``babeleval.tasks.lmeval_catalogue``'s.

A local folder stands in for the hub in the dataset's own layout: ``<path>/<dataset_name>/<split>.<ext>`` (a
config's files, as the hub repository holds them), or ``<path>/<split>.<ext>`` for a dataset without configs;
``ext`` is ``jsonl``, ``json``, ``parquet`` or ``csv``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError, DataError
from . import lmeval_catalogue as catalogue
from .base import EVAL, LOCAL, Task

# lm-eval's default few-shot seed (``simple_evaluate(fewshot_random_seed=1234)``): the same exemplars as its CLI
FEWSHOT_SEED = 1234
# the builders of ``datasets`` that read each local file format
BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
# the template every lm-eval task's items are rendered with, by family: lm-eval's context and continuations, or
# its context and generation settings, as they are
TEMPLATE_FILES = {"multiple_choice": Path("prompts") / "lmeval" / "multiple_choice.yaml",
                  catalogue.GENERATED: Path("prompts") / "lmeval" / "generate_until.yaml"}
# lm-eval's greedy decoding, as params.yaml's decoding presets name it (a sampling task is refused: catalogue)
GREEDY = "greedy"


class LmevalTask(Task):
    """One ``lmeval`` entry of a grid; its family is its lm-eval tasks' output type's (multiple choice, or a
    generated answer read by lm-eval's filters)."""

    def __init__(self, name: str, spec: str):
        self.NAME = name
        self.spec = spec
        self.OPTIONS = {"lmeval": spec}

    @property
    def FAMILY(self) -> str:  # noqa: N802 - the attribute every task declares (babeleval.tasks.base)
        return catalogue.family_of(self.spec)

    @property
    def template_file(self) -> Path:
        return TEMPLATE_FILES[self.FAMILY]

    def template_settings(self) -> dict[str, Any]:
        """What the template takes from lm-eval's task config rather than its file: a generate_until task's
        ``generation_kwargs``, as the template's ``generation`` (stop strings, token limit, greedy decoding)."""
        if self.FAMILY != catalogue.GENERATED:
            return {}
        generation = catalogue.generation_of(self.spec, f"tasks.{self.NAME}.lmeval")
        return {"generation": {"decoding": GREEDY, "max_new_tokens": generation["max_gen_toks"],
                               # lm-eval's HF model cuts at the non-empty ones only
                               "stop": [stop for stop in generation["until"] if stop]}}

    def leaves(self, language: str) -> tuple[catalogue.Leaf, ...]:
        return catalogue.plan(self.spec, [language], f"tasks.{self.NAME}.lmeval").leaves[language]

    def shots(self, language: str) -> int:
        """The exemplars lm-eval puts before each item in a language (its tasks' ``num_fewshot``; 0 where unset)."""
        return max(int(leaf.config.get("num_fewshot") or 0) for leaf in self.leaves(language))

    def check(self, entry: dict[str, Any], where: str) -> catalogue.Plan:
        """A grid entry checked before any job: its templates (the one named after the lm-eval name), what each
        language evaluates (refusals named), and a hub source's dataset and pinned revision."""
        if list(entry["templates"]) != [self.spec]:
            raise ConfigError(f"{where}.templates: an lm-eval task has one template, named after it: "
                              f"[{self.spec}] (got {entry['templates']})")
        plan = catalogue.plan(self.spec, list(entry["languages"]), f"{where}.lmeval")
        if plan.unsupported:
            logging.getLogger(__name__).warning("%s.lmeval: lm-eval '%s': not reported: %s", where, self.spec, "; ".join(
                f"{name} ({why})" for name, why in plan.unsupported.items()))
        if entry["source"]["kind"] != LOCAL:
            for leaf in {leaf.name: leaf for leaves in plan.leaves.values() for leaf in leaves}.values():
                try:
                    dataset_overrides(leaf, entry["source"], ".")
                except ConfigError as exc:
                    raise ConfigError(f"{where}.source: {exc}") from None
        return plan

    def files(self, source, language, root=".", part=EVAL, options=None):
        if source["kind"] != LOCAL:
            return []
        return [local_file(source, root, leaf.dataset_name, leaf.split) for leaf in self.leaves(language)]

    def load(self, source, language, root=".", part=EVAL, options=None):
        items = []
        for leaf in self.leaves(language):
            items += rendered_items(leaf, source, root, language, self.NAME)
        return items


def local_file(source: dict[str, Any], root: str | Path, config: str | None, split: str) -> Path:
    """The file a local folder holds for one config and split, in the hub repository's layout."""
    folder = Path(root) / source["path"] / (config or "")
    for suffix in BUILDERS:
        path = folder / f"{split}{suffix}"
        if path.is_file():
            return path
    return folder / f"{split}.jsonl"  # the one named when none is there


def dataset_overrides(leaf: catalogue.Leaf, source: dict[str, Any], root: str | Path) -> dict[str, Any]:
    """The config keys that point lm-eval's task at the source: a local folder's files, or the hub at a revision."""
    if source["kind"] == LOCAL:
        # the splits its config names that the folder holds (lm-eval reads a validation split for its exemplar
        # sampler even where it draws none); the evaluated split and the exemplars' must be there
        named = {leaf.config.get(key) for key in ("test_split", "validation_split", "training_split", "fewshot_split")}
        needed = {leaf.split, *([leaf.fewshot_split] if leaf.fewshot_split else [])}
        files = {split: local_file(source, root, leaf.dataset_name, split) for split in named | needed if split}
        files = {split: path for split, path in files.items() if path.is_file() or split in needed}
        missing = [str(path) for path in files.values() if not path.is_file()]
        if missing:
            raise DataError(f"lm-eval task '{leaf.name}': no file {', '.join(missing)} (a local folder holds "
                            "<dataset_name>/<split>.jsonl|json|parquet|csv)")
        suffixes = {path.suffix for path in files.values()}
        return {"dataset_path": BUILDERS[suffixes.pop()], "dataset_name": None,
                "dataset_kwargs": {"data_files": {split: str(path) for split, path in files.items()}}}
    if source.get("dataset") != leaf.dataset_path:
        raise ConfigError(f"lm-eval task '{leaf.name}' reads {leaf.dataset_path}; source.dataset says "
                          f"{source.get('dataset')!r}")
    if not source.get("revision"):
        raise ConfigError(f"lm-eval task '{leaf.name}': source.revision must pin the hub dataset's commit")
    return {"dataset_kwargs": {**(leaf.config.get("dataset_kwargs") or {}), "revision": source["revision"]}}


def build(leaf: catalogue.Leaf, source: dict[str, Any], root: str | Path) -> Any:
    """lm-eval's task object for a leaf, its rows read from the source, its requests built as its evaluator
    builds them (zero-shot unless the task sets ``num_fewshot``; exemplars drawn with lm-eval's default seed)."""
    manager = catalogue.task_manager()
    config = {**leaf.resolved_config(), **dataset_overrides(leaf, source, root)}
    logging.getLogger("lm_eval").setLevel(logging.WARNING)
    task = manager.load(config)["tasks"][leaf.name]
    task.set_fewshot_seed(FEWSHOT_SEED)
    task.build_all_requests(rank=0, world_size=1)
    return task


def rendered_items(leaf: catalogue.Leaf, source: dict[str, Any], root: str | Path, language: str,
                   task_name: str) -> list[dict[str, Any]]:
    """The canonical items of one lm-eval task: per document, lm-eval's context, and its continuations, choices
    and gold index (multiple choice) or its gold answer (generate_until)."""
    task = build(leaf, source, root)
    version = catalogue.lmeval_version()  # the rendering's code, on record with each item
    by_doc: dict[int, list[Any]] = {}
    for instance in task.instances:
        by_doc.setdefault(instance.doc_id, []).append(instance)
    items = []
    for doc_id, instances in sorted(by_doc.items()):
        instances.sort(key=lambda instance: instance.idx)
        doc = instances[0].doc
        item = {
            "id": f"{leaf.name}#{doc_id}",
            "task": task_name,
            "language": language,
            "group": f"{leaf.name}#{doc_id}",
            "lmeval_task": leaf.name,
            "lmeval_version": version,
            "lmeval_context": instances[0].arguments[0],
        }
        if leaf.generated:
            item["answer"] = generated_gold(task, doc)
        else:
            choices = [str(choice) for choice in task.doc_to_choice(doc)]
            item.update(lmeval_continuations=[instance.arguments[1] for instance in instances], choices=choices,
                        answer=gold_index(task.doc_to_target(doc), choices, f"{leaf.name} document {doc_id}"))
        items.append(item)
    if not items:
        raise DataError(f"lm-eval task '{leaf.name}' ({language}): no documents")
    return items


def gold_index(target: Any, choices: list[str], where: str) -> int:
    """The gold choice's index, as lm-eval reads ``doc_to_target``: an index, or the gold choice's text."""
    if isinstance(target, int) and 0 <= target < len(choices):
        return target
    if isinstance(target, str) and target in choices:
        return choices.index(target)
    raise DataError(f"{where}: doc_to_target gives {target!r}, neither an index nor one of the choices {choices}")


def generated_gold(task: Any, doc: dict[str, Any]) -> str | list[Any]:
    """The reference a generate_until task's filtered reply is compared with, as lm-eval's ``process_results``
    makes it: the choice ``doc_to_target`` names where the task has ``doc_to_choice``; the list lm-eval makes of
    several references per document (its ``multiple_target``: nq_open, triviaqa); else ``doc_to_target`` as text
    (the filtered reply's type)."""
    gold = task.doc_to_target(doc)
    if task.config.doc_to_choice is not None:
        return task.doc_to_choice(doc)[gold]
    if task.multiple_target:
        return list(gold)
    return gold if isinstance(gold, str) else str(gold)


def register(tasks: dict[str, Any]) -> None:
    """Register the ``lmeval`` entries of params.yaml's ``tasks`` as tasks (validation and the jobs call this
    before naming a task): no lm-eval import here."""
    from . import TASKS

    for name, entry in (tasks or {}).items():
        if isinstance(entry, dict) and isinstance(entry.get("lmeval"), str):
            if name in TASKS and not isinstance(TASKS[name], LmevalTask):
                raise ConfigError(f"tasks.{name}: a babeleval task has this name; give the lmeval entry another")
            TASKS[name] = LmevalTask(name, entry["lmeval"])
