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

import copy
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

# lm-eval's output types babeleval scores, as the family its items become (babeleval.tasks.families)
GENERATED = "lmeval_generate"
FAMILY_OF = {"multiple_choice": "multiple_choice", "generate_until": GENERATED}
# why the other output types cannot run: said at start-up, never half-run
REFUSED_OUTPUT = {
    "loglikelihood": "it scores one continuation's log-likelihood (perplexity-style), which no babeleval family reports",
    "loglikelihood_rolling": "it scores a whole document's rolling log-likelihood (perplexity), which no babeleval "
                             "family reports",
}
# lm-eval's metric -> babeleval's metric object of the same definition (babeleval.score.metrics) for the output
# types babeleval runs: a multiple-choice task's argmax of the continuations' log-likelihoods, raw and divided by
# the continuation's length in characters (babeleval's exact_match and f1 are SQuAD's, over extracted spans: not
# lm-eval's classification f1 or its exact_match of a filtered generation)
METRICS = {"acc": "acc", "acc_norm": "acc_norm"}
# a generate_until task's metric: lm-eval's own exact_match, computed by lm-eval after each of the task's filter
# pipelines and reported per pipeline as lm-eval names it (``exact_match,<pipeline>``: babeleval.score.lmeval_filters)
GENERATED_METRICS = ("exact_match",)
# lm-eval's filters whose output depends on the reply alone: built with lm-eval's own classes at scoring time
FILTERS = ("regex", "take_first", "remove_whitespace", "lowercase", "uppercase")
# why the others cannot run
REFUSED_FILTERS = {
    "majority_vote": "it votes over several sampled answers per document (repeats), which babeleval does not draw",
    "take_first_k": "it keeps several sampled answers per document (repeats), which babeleval does not draw",
    "multi_choice_regex": "it reads the document's choices beside the reply, and babeleval's records do not carry "
                          "lm-eval's documents",
    "custom": "it is a Python function of the task that reads the documents beside the reply",
}
# lm-eval's generation settings babeleval carries into a generate template (``normalize_gen_kwargs``' keys); any
# other (top_p, a sampling temperature ...) is a decoding babeleval's greedy preset does not give
GENERATION_KEYS = ("until", "max_gen_toks", "do_sample", "temperature")
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
        """Its ``metric_list``; where it has none, lm-eval's default for its output type (without options)."""
        return self.config.get("metric_list") or [{"metric": "exact_match" if self.generated else "acc"}]

    @property
    def generated(self) -> bool:
        return self.output_type == "generate_until"

    @property
    def metrics(self) -> tuple[str, ...]:
        """Its metrics that babeleval computes the same way (each item's value averaged), as babeleval names them:
        a generate_until task's exact_match once per filter pipeline, then its parse-failure rate."""
        supported = [m["metric"] for m in self.metric_list if unsupported_because(m, self.generated) is None]
        if self.generated:
            return (*(f"{name},{pipeline}" for name in supported for pipeline in self.pipelines),
                    "parse_failure_rate") if supported else ()
        return tuple(METRICS[name] for name in supported)

    @property
    def unsupported(self) -> dict[str, str]:
        """Its metrics that babeleval does not report, and why: named at start-up, never computed differently."""
        return {str(m["metric"]): why for m in self.metric_list
                if (why := unsupported_because(m, self.generated)) is not None}

    @property
    def filter_list(self) -> list[dict[str, Any]]:
        """Its filter pipelines as lm-eval builds them: the task's ``filter_list``, else lm-eval's ``none``
        (take_first)."""
        return self.config.get("filter_list") or [{"name": "none", "filter": [{"function": "take_first"}]}]

    @property
    def pipelines(self) -> tuple[str, ...]:
        return tuple(str(pipeline["name"]) for pipeline in self.filter_list)

    @property
    def metric_options(self) -> dict[str, Any]:
        """exact_match's options as lm-eval passes them (ignore_case, ignore_punctuation, regexes_to_ignore ...)."""
        entry = next(m for m in self.metric_list if m.get("metric") == "exact_match")
        return {key: value for key, value in entry.items()
                if key not in ("metric", "aggregation", "higher_is_better", "hf_evaluate")}

    @property
    def generation(self) -> dict[str, Any]:
        """Its ``generation_kwargs`` as lm-eval's own ``TaskConfig`` and HF model read them: the stop strings
        (``until``; lm-eval's default is the few-shot delimiter), ``max_gen_toks`` (the HF model's 256 where unset),
        ``do_sample``, ``temperature`` and anything else the task sets."""
        from lm_eval.config.task import TaskConfig
        from lm_eval.defaults import DEFAULT_MAX_GEN_TOKS  # its HF model's limit where a task sets none
        from lm_eval.models.utils import normalize_gen_kwargs

        config = TaskConfig(task=self.name, output_type="generate_until",
                            generation_kwargs=copy.deepcopy(self.config.get("generation_kwargs")),
                            fewshot_delimiter=self.config.get("fewshot_delimiter", "\n\n"))
        return dict(normalize_gen_kwargs(config.generation_kwargs, DEFAULT_MAX_GEN_TOKS))


def unsupported_because(metric: dict[str, Any], generated: bool = False) -> str | None:
    """Why babeleval has no metric object for an lm-eval ``metric_list`` entry, or None."""
    name = metric.get("metric")
    if not isinstance(name, str):
        return "given as code"
    known = GENERATED_METRICS if generated else tuple(METRICS)
    if name not in known:
        return f"no babeleval metric object (babeleval maps {', '.join(known)})"
    if metric.get("aggregation", "mean") != "mean":
        return "aggregated by a function of the task, not the mean of its items"
    if metric.get("hf_evaluate"):
        return "computed by the evaluate library's version of the metric, not lm-eval's own"
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
    if leaf.generated:
        why = generation_refusal(leaf)
        if why:
            return why
    names = [m.get("metric") for m in config.get("metric_list") or []]
    judged = [n for n in names if isinstance(n, str) and any(j in n for j in JUDGED)]
    if judged:
        return f"metric {judged[0]} asks another model (an external judge)"
    if not leaf.metrics:
        return "none of its metrics has a babeleval metric object: " + "; ".join(
            f"{name}: {why}" for name, why in leaf.unsupported.items())
    if config.get("filter_list") and not leaf.generated:
        return "its answers pass through lm-eval filters, which babeleval does not map"
    return None


def generation_refusal(leaf: Leaf) -> str | None:
    """Why babeleval cannot run a generate_until task as lm-eval does, or None: it scores its own way, samples,
    or reads its replies with a filter that needs more than the reply."""
    config = leaf.config
    if config.get("process_results"):
        return "its replies are scored by a Python function of the task (process_results), not lm-eval's metrics"
    if int(config.get("repeats") or 1) > 1:
        return f"it samples {config['repeats']} answers per document (repeats), which babeleval does not draw"
    for pipeline in leaf.filter_list:
        steps = [step.get("function") for step in pipeline.get("filter") or []]
        for function in steps:
            if function not in FILTERS:
                why = REFUSED_FILTERS.get(function, f"babeleval runs lm-eval's filters {', '.join(FILTERS)}")
                return f"filter pipeline {pipeline.get('name')}: filter {function!r}: {why}"
        if not steps or steps[-1] != "take_first":
            return (f"filter pipeline {pipeline.get('name')} does not end with take_first: it leaves a list of "
                    "answers per document, which lm-eval scores as a list")
    generation = leaf.generation
    if generation.get("do_sample"):
        return (f"it samples (do_sample, temperature {generation.get('temperature')}); babeleval carries lm-eval's "
                "greedy decoding, a sampled one is a params.yaml decoding preset of a babeleval template")
    others = sorted(set(generation) - set(GENERATION_KEYS))
    if others:
        return f"its generation_kwargs set {', '.join(others)}, which babeleval's greedy decoding does not carry"
    return None


@functools.cache
def generation_of(spec: str, where: str) -> dict[str, Any]:
    """The generation settings every leaf under ``spec`` shares (the one template carries one set). Read once per
    process: every load of the task's template asks (not to be changed by the caller)."""
    settings = {json.dumps(leaf.generation, sort_keys=True) for leaf in expand(spec, where) if leaf.generated}
    if len(settings) != 1:
        found = "no generate_until task" if not settings else "tasks with different generation_kwargs"
        raise ConfigError(f"{where}: lm-eval '{spec}' has {found}; name one of its members")
    return json.loads(settings.pop())


@functools.cache
def family_of(spec: str) -> str:
    """The babeleval family of an lm-eval name's tasks (one: a name mixing output types is refused)."""
    types = {leaf.output_type for leaf in expand(spec, f"lmeval '{spec}'")}
    if len(types) != 1:
        raise ConfigError(f"lmeval '{spec}' mixes output types across its tasks ({', '.join(sorted(types))}); "
                          "name one of its members")
    output_type = types.pop()
    if output_type not in FAMILY_OF:
        raise ConfigError(f"lmeval '{spec}': output_type {output_type}: "
                          + REFUSED_OUTPUT.get(output_type, "unknown to babeleval"))
    return FAMILY_OF[output_type]


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
