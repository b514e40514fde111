"""lm-evaluation-harness's task catalogue, read at start-up: what a ``lmeval: <task or group>`` entry names.

lm-eval (the ``lmeval`` extra, 0.4.x) is used as a library with its own ``TaskManager``: its index of task,
group and tag YAML files decides what a name is, its YAML loader resolves ``include:`` and ``!function``. This
module plans without building a task (building one downloads its dataset): it expands a name into the leaf tasks
of each grid language and refuses, naming the task and the reason, what babeleval cannot give. Rendering the
documents is ``babeleval.tasks.lmeval``'s.

Importing lm-eval costs about 2 s; its index of names about 10 s on a quiet 2-core machine (14,683 names in
0.4.13), so it is built once per installation and kept in the user's cache (``index_file``). Only a grid with an
``lmeval`` entry pays for either. lm-eval does not import torch.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..core.languages import LANGUAGES

# lm-eval's output types babeleval scores, as the family its items become
FAMILY_OF = {"multiple_choice": "multiple_choice"}
# why the other output types cannot run (yet): said at start-up, never half-run
REFUSED_OUTPUT = {
    "generate_until": "its answers are generated and read by lm-eval's filters (regex, take_first ...), which "
                      "babeleval does not map to its parsers; use a babeleval family with a generate template",
    "loglikelihood": "it scores one continuation's log-likelihood (perplexity-style), which no babeleval family reports",
    "loglikelihood_rolling": "it scores a whole document's rolling log-likelihood (perplexity), which no babeleval "
                             "family reports",
}
# lm-eval's metric -> babeleval's metric object of the same definition (babeleval.score.metrics) for the output
# types babeleval runs: a multiple-choice task's argmax of the continuations' log-likelihoods, raw and divided by
# the continuation's length in characters (babeleval's exact_match and f1 are SQuAD's, over extracted spans: not
# lm-eval's classification f1 or its exact_match of a filtered generation)
METRICS = {"acc": "acc", "acc_norm": "acc_norm"}
# config keys that mean a need babeleval cannot meet, and why
NEEDS = {
    "unsafe_code": "it executes generated code",
    "doc_to_image": "its documents hold images (a multimodal task)",
    "doc_to_audio": "its documents hold audio (a multimodal task)",
    "custom_dataset": "its documents come from a Python function, not a dataset files can stand in for",
}
JUDGED = ("judge", "llm_as_a_judge", "gpt4_judge")  # metric names that ask another model


@dataclass(frozen=True)
class Leaf:
    """One lm-eval task a grid language reads: its full config (group defaults merged in) and where its rows are."""

    name: str
    config: dict[str, Any]  # as planned: ``!function`` entries not imported (a task's module may reach the hub)
    defaults: tuple[tuple[str, Any], ...] = ()  # what its groups set for it

    def resolved_config(self) -> dict[str, Any]:
        """Its config with its Python functions imported, as lm-eval builds the task from it."""
        entry = task_index()[self.name]
        try:
            return {**_config(entry, resolve=True), **dict(self.defaults)}
        except Exception as exc:  # a task module's own import: anything it raises is the task's, said as such
            raise ConfigError(f"lm-eval task '{self.name}': its Python functions cannot be loaded here "
                              f"({type(exc).__name__}: {exc})") from None

    @property
    def dataset_path(self) -> str:
        return self.config["dataset_path"]

    @property
    def dataset_name(self) -> str | None:
        return self.config.get("dataset_name")

    @property
    def split(self) -> str:
        return self.config.get("test_split") or self.config["validation_split"]

    @property
    def fewshot_split(self) -> str | None:
        """The split lm-eval's exemplar sampler reads (it reads one where the config names it, even zero-shot)."""
        if self.config.get("fewshot_split"):
            return self.config["fewshot_split"]
        if not self.config.get("num_fewshot"):
            return None
        return self.config.get("training_split") or self.config.get("validation_split") or self.split

    @property
    def output_type(self) -> str:
        return self.config.get("output_type", "generate_until")

    @property
    def metric_list(self) -> list[dict[str, Any]]:
        return self.config.get("metric_list") or [{"metric": "acc"}]  # lm-eval's default for multiple choice

    @property
    def metrics(self) -> tuple[str, ...]:
        """Its metrics that babeleval computes the same way (each item's value averaged), as babeleval names them."""
        return tuple(METRICS[m["metric"]] for m in self.metric_list if unsupported_because(m) is None)

    @property
    def unsupported(self) -> dict[str, str]:
        """Its metrics that babeleval does not report, and why: named at start-up, never computed differently."""
        return {str(m["metric"]): why for m in self.metric_list if (why := unsupported_because(m)) is not None}


def unsupported_because(metric: dict[str, Any]) -> str | None:
    """Why babeleval has no metric object for an lm-eval ``metric_list`` entry, or None."""
    name = metric.get("metric")
    if not isinstance(name, str):
        return "given as code"
    if name not in METRICS:
        return f"no babeleval metric object (babeleval maps {', '.join(METRICS)})"
    if metric.get("aggregation", "mean") != "mean":
        return "aggregated by a function of the task, not the mean of its items"
    return None


@dataclass(frozen=True)
class Plan:
    """What one ``lmeval:`` name means for a grid: per grid language, the leaf tasks it evaluates."""

    spec: str
    family: str
    metrics: tuple[str, ...]
    leaves: dict[str, tuple[Leaf, ...]]  # grid language -> its lm-eval tasks, in the group's order
    unsupported: dict[str, str]  # its metrics babeleval does not report -> why (said at start-up)


@dataclass(frozen=True)
class IndexEntry:
    """What lm-eval's index says of a name: its kind (TASK, PY_TASK, GROUP, TAG), its YAML file, a tag's tasks."""

    kind: str
    yaml_path: str | None
    members: tuple[str, ...] = ()


def _lmeval_location() -> tuple[str, Path]:
    """The installed lm-eval's version and task directory, found without importing it."""
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("an 'lmeval' task entry needs lm-evaluation-harness 0.4: pip install 'babeleval[lmeval]'")
    return importlib.metadata.version("lm_eval"), Path(list(spec.submodule_search_locations)[0]) / "tasks"


def lmeval_version() -> str:
    return _lmeval_location()[0]


def index_file() -> Path:
    """Where lm-eval's index is kept between processes: one file per lm-eval version and installation."""
    version, tasks = _lmeval_location()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "babeleval"
    return cache / f"lmeval-index-{version}-{hashlib.sha256(str(tasks).encode()).hexdigest()[:12]}.json"


@functools.cache
def task_index() -> dict[str, IndexEntry]:
    """lm-eval's index of its shipped tasks, groups and tags, as its ``TaskManager`` builds it (about 10 s on a
    quiet 2-core machine, 14,683 names in 0.4.13): built once per installation, then read from ``index_file``."""
    path = index_file()
    if path.is_file():
        return {name: IndexEntry(kind, yaml_path, tuple(members))
                for name, (kind, yaml_path, members) in json.loads(path.read_text(encoding="utf-8")).items()}
    from lm_eval.tasks import TaskManager

    index = {name: IndexEntry(entry.kind.name, str(entry.yaml_path) if entry.yaml_path else None,
                              tuple(sorted(entry.tags)) if entry.kind.name == "TAG" else ())
             for name, entry in TaskManager().task_index.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # whole or absent: processes may build it at once
    partial.write_text(json.dumps({name: [e.kind, e.yaml_path, list(e.members)] for name, e in index.items()}),
                       encoding="utf-8")
    partial.replace(path)
    return index


@functools.cache
def task_manager() -> Any:
    """lm-eval's ``TaskManager`` that builds a task from its full config (no index of its own: ``task_index``)."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_defaults=False)


def _entry(name: str, where: str) -> IndexEntry:
    entry = task_index().get(name)
    if entry is None:
        raise ConfigError(f"{where}: lm-eval has no task or group '{name}' (lm-eval's own list: lm-eval ls tasks)")
    return entry


def _config(entry: IndexEntry, resolve: bool = False) -> dict[str, Any]:
    """An index entry's config, ``include:`` resolved; its ``!function`` entries imported only with ``resolve``."""
    if entry.yaml_path is None:
        return {}
    from lm_eval.tasks._yaml_loader import load_yaml

    return dict(load_yaml(entry.yaml_path, resolve_func=resolve))


def _group_fields() -> set[str]:
    from dataclasses import fields

    from lm_eval.api.group import GroupConfig

    return {field.name for field in fields(GroupConfig)}


def expand(name: str, where: str, defaults: dict[str, Any] | None = None) -> list[Leaf]:
    """The leaf tasks under a task, group or tag, in its order, each with the defaults its groups set for it
    (lm-eval merges a group's non-structural keys into its members' configs the same way)."""
    entry = _entry(name, where)
    kind = entry.kind
    if kind in ("TASK", "PY_TASK"):
        config = {**_config(entry), **(defaults or {})}
        if kind == "PY_TASK" or "class" in config:
            raise ConfigError(f"{where}: lm-eval task '{name}' is a Python class: its prompts and scoring are code "
                              "that babeleval cannot read as documents and templates")
        return [Leaf(name, config, tuple((defaults or {}).items()))]
    if kind == "TAG":
        return [leaf for member in entry.members for leaf in expand(member, where, defaults)]
    raw = _config(entry)
    group_fields = _group_fields()
    merged = {**{k: v for k, v in raw.items() if k not in group_fields}, **(defaults or {})}
    leaves = []
    for member in raw.get("task") or []:
        member_name, member_defaults = _member(member, name, where)
        leaves += expand(member_name, where, {**merged, **member_defaults})
    return leaves


def _member(member: Any, group: str, where: str) -> tuple[str, dict[str, Any]]:
    """A group member's name and the keys the group sets for it (``- task: <name>`` with ``task_alias`` ...)."""
    if isinstance(member, str):
        return member, {}
    if isinstance(member, dict) and isinstance(member.get("task"), str) and member["task"] in task_index():
        return member["task"], {key: value for key, value in member.items() if key not in ("task", "task_alias")}
    raise ConfigError(f"{where}: lm-eval group '{group}' defines a member inline ({member!r:.80}); babeleval reads "
                      "members that lm-eval registers by name")


def children(name: str, where: str) -> list[str]:
    """A group's direct members (a task's: none)."""
    entry = _entry(name, where)
    if entry.kind != "GROUP":
        return []
    return [_member(member, name, where)[0] for member in _config(entry).get("task") or []]


def language_keys(code: str) -> set[str]:
    """The ways lm-eval task names write a grid language: the FLORES code (``jpn_Jpan``), ISO 639-3 (``jpn``),
    the short code (``ja``), the English name (``japanese``)."""
    name, short = LANGUAGES.get(code, ("", ""))
    return {key.lower() for key in (code, code.split("_")[0], short, name.replace(" ", "_")) if key}


def match_language(code: str, names: list[str]) -> list[str]:
    """The names whose last ``_``-separated part(s) write the language ``code``."""
    keys = language_keys(code)
    return [n for n in names if any(n.lower() == k or n.lower().endswith("_" + k) for k in keys)]


def refusal(leaf: Leaf) -> str | None:
    """Why babeleval cannot run an lm-eval task, or None."""
    config = leaf.config
    for key, why in NEEDS.items():
        if config.get(key):
            return why
    if leaf.output_type not in FAMILY_OF:
        return f"output_type {leaf.output_type}: " + REFUSED_OUTPUT.get(leaf.output_type, "unknown to babeleval")
    names = [m.get("metric") for m in config.get("metric_list") or []]
    judged = [n for n in names if isinstance(n, str) and any(j in n for j in JUDGED)]
    if judged:
        return f"metric {judged[0]} asks another model (an external judge)"
    if not leaf.metrics:
        return "none of its metrics has a babeleval metric object: " + "; ".join(
            f"{name}: {why}" for name, why in leaf.unsupported.items())
    if config.get("filter_list"):
        return "its answers pass through lm-eval filters, which babeleval does not map"
    return None


def plan(spec: str, languages: list[str], where: str) -> Plan:
    """What ``lmeval: spec`` evaluates in each grid language; anything babeleval cannot run stops here, named.
    Planned once per process for the same question (the rules and jobs ask for a language's files many times)."""
    return _plan(spec, tuple(languages), where)


@functools.cache
def _plan(spec: str, languages: tuple[str, ...], where: str) -> Plan:
    """``plan``'s work.

    A group whose members are per language (their names end in a language: ``_ja``, ``_japanese``,
    ``_jpn_Jpan``) gives each grid language its member; any other task or group is the one grid language's."""
    members = children(spec, where)
    per_language = any(match_language(code, members) for code in LANGUAGES)
    if per_language:
        chosen = {language: match_language(language, members) for language in languages}
    elif len(languages) == 1:
        chosen = {languages[0]: [spec]}
    else:
        raise ConfigError(f"{where}: lm-eval '{spec}' is not a group of per-language members; it is one "
                          f"language's: list one grid language, not {len(languages)}")
    for language, names in chosen.items():
        if len(names) != 1:
            found = "none" if not names else ", ".join(names)
            raise ConfigError(f"{where}: language '{language}': lm-eval '{spec}' has {found} of its members for it "
                              f"(members: {', '.join(members)})")
    leaves = {language: tuple(expand(names[0], where)) for language, names in chosen.items()}
    for language, tasks in leaves.items():
        for leaf in tasks:
            why = refusal(leaf)
            if why:
                raise ConfigError(f"{where}: lm-eval task '{leaf.name}' (language {language}) cannot run: {why}")
    all_leaves = [leaf for tasks in leaves.values() for leaf in tasks]
    unsupported = {name: why for leaf in all_leaves for name, why in leaf.unsupported.items()}
    families = {FAMILY_OF[leaf.output_type] for leaf in all_leaves}
    metrics = {leaf.metrics for leaf in all_leaves}
    if len(families) > 1 or len(metrics) > 1:
        raise ConfigError(f"{where}: lm-eval '{spec}' mixes output types or metrics across its tasks "
                          f"({sorted(families)}, {sorted(metrics)}); name one of its members")
    return Plan(spec, families.pop(), metrics.pop(), leaves, unsupported)
