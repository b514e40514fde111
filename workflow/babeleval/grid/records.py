"""The validated grid and its resolved records: what runs, decided once.

Validation of params.yaml (``babeleval.grid.params``) turns each task entry into a ``TaskEntry`` and
resolves every combination of the grid into a ``CombinationRecord`` (``babeleval.grid.resolve``): the
prompt record its prompts are rendered from (``babeleval.prompts.record``: the prepared files, the exemplar
pool, the seeds, the item limit and the few-shot plan), the decoding settings, the parser, the metrics, and
the model settings that decide its outputs. Rules, jobs, ``show`` and provenance read these records; none
decides any of it again from params.yaml or a task's attributes. The record is written into the
combination's scores file (``provenance.spec``), so what ran is on record next to its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Iterator, Mapping

from ..analysis.settings import AnalysisSettings
from ..generate.backends.config import ModelConfig
from ..prompts.budget_design import StudyPlan
from ..prompts.record import PromptRecord
from ..prompts.templates import Template


@dataclass(frozen=True)
class TaskEntry:
    """A task entry of params.yaml, validated: its templates loaded, its options completed."""

    name: str
    languages: tuple[str, ...]
    templates: dict[str, Template]
    source: dict[str, Any]
    limit: int | None
    options: dict[str, Any]  # task-specific keys (translation's partner, topics' count), defaults filled in
    metric_options: dict[str, Any]  # settings metrics need (the FLORES-200 SentencePiece model path)
    # base template -> its budgeted variant set's plan (``variants.<base>.budget``: babeleval.grid.variants)
    budgets: dict[str, StudyPlan] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricEntry:
    """A metric as a combination reports it: its scale, which way is better, whether it is the headline, how it
    is bootstrapped and how its interval is computed."""

    name: str
    scale: str  # "0-1" (stored as a share, shown as percent) or "0-100"
    higher_is_better: bool
    headline: bool  # the combination's headline number
    bootstrap: str  # "corpus": resampled from sacrebleu statistics; "items": resampled per item
    interval: str  # how its interval is computed (babeleval.score.metrics.INTERVAL_METHODS)


@dataclass(frozen=True)
class CombinationRecord:
    """Everything that decides the numbers of one (model, task, language, template)."""

    model: str
    prompts: PromptRecord
    family: str  # the task family
    mode: str
    decoding: Mapping[str, Any]  # the generation job's settings (babeleval.grid.resolve.decoding_settings)
    parser: str | None
    metrics: tuple[MetricEntry, ...]
    metric_options: Mapping[str, Any]  # what the metrics need (BLEU's target language, the SentencePiece model)
    model_outputs: Mapping[str, Any]  # the model settings that change outputs (babeleval.generate.fingerprint)

    @property
    def task(self) -> str:
        return self.prompts.task

    @property
    def language(self) -> str:
        return self.prompts.language

    @property
    def template(self) -> str:
        return self.prompts.template

    def as_json(self) -> dict[str, Any]:
        """The record as plain JSON types (tuples as lists), as written into the scores file."""
        return _plain(self)


def _plain(value: Any) -> Any:
    """Dataclasses and mappings as dicts, tuples as lists, field by field (``dataclasses.asdict`` deep-copies every
    value first: a grid of 30,000 records spent most of its planning there)."""
    if isinstance(value, PromptRecord):  # its own JSON: a budget key only where it has one
        return value.as_json()
    if is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Omission:
    """A (model, task, template) the grid leaves out, for every language of the task, and why."""

    model: str
    task: str
    template: str
    reason: str


@dataclass(frozen=True)
class Grid:
    """params.yaml validated, with the resolved records of every combination."""

    seed: int
    models: dict[str, ModelConfig]  # each entry typed by its backend (babeleval.generate.backends.config)
    tasks: dict[str, TaskEntry]
    decoding: dict[str, dict[str, Any]]
    cache_enabled: bool
    source_file: str
    analysis: AnalysisSettings
    # model -> the settings of its entry that change its outputs (babeleval.generate.fingerprint), resolved once
    model_outputs: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    # (task, language, template) -> its prompt record; (model, task, language, template) -> its record
    prompts: dict[tuple[str, str, str], PromptRecord] = field(default_factory=dict)
    records: dict[tuple[str, str, str, str], CombinationRecord] = field(default_factory=dict)
    # model -> task -> the templates it runs (None: every template of every task); what it leaves out, and why
    runs: dict[str, dict[str, tuple[str, ...]]] | None = None
    omitted: tuple[Omission, ...] = ()

    def record(self, model: str, task: str, language: str, template: str) -> CombinationRecord:
        return self.records[model, task, language, template]

    def prompt_record(self, task: str, language: str, template: str) -> PromptRecord:
        return self.prompts[task, language, template]

    def combinations(self) -> Iterator[tuple[str, str, str, str]]:
        """Every (model, task, language, template) the grid asks for, in a stable order."""
        for model in self.models:
            for task in self.tasks.values():
                templates = self.templates_of(model, task.name)
                for language in task.languages:
                    for template in templates:
                        yield model, task.name, language, template

    def templates_of(self, model: str, task: str) -> tuple[str, ...]:
        """The templates of a task a model runs (none where it runs nothing of the task)."""
        if self.runs is None:
            return tuple(self.tasks[task].templates)
        return self.runs[model].get(task, ())

    def runs_something(self, model: str) -> bool:
        """Whether a model is asked anything: it runs a template, or a template names it as its extractor."""
        return (any(self.templates_of(model, task) for task in self.tasks)
                or any(t.extractor == model for task in self.tasks.values() for t in task.templates.values()))

    def models_of(self, task: str) -> list[str]:
        """The models that run some template of a task."""
        return [model for model in self.models if self.templates_of(model, task)]
