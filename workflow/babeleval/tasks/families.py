"""Task families: what a family's items are asked in, read as and scored by, one registration per family.

A task names its family (``Task.FAMILY``); everything that depends on the family reads its ``Family``:
which scoring modes a template may use, what a combination reports when its template names no metrics,
which kinds of answer parser can read its generated answers, whether its items carry choices, whether its
metrics need the language a reply is written in, and the function that scores one record. Which metrics
can be computed for a family is said by each metric (``babeleval.score.metrics``).

A family is registered once (``register``), from the package or from an extension file params.yaml names
under ``modules`` (``babeleval.core.extensions``; docs/extending.md). Its scorer lives in the scoring stage,
which this stage does not import: a built-in family names it as a ``"module:attribute"`` target, imported
when scoring first asks for it (``SCORERS``); an extension file, outside the stages, can give the function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..core.registry import Registry, lazy

# (record, template, parsed answer or None) -> the scored fields (babeleval.score.scorers)
Scorer = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Family:
    name: str
    # scoring mode -> the metrics a combination reports unless its template lists its own
    default_metrics: Mapping[str, tuple[str, ...]]
    # the kinds of answer parser (babeleval.score.parsers) its generate templates may read answers with; none where
    # its replies are read by the task's own rules (an lm-eval task's filters: babeleval.score.lmeval_filters)
    parser_kinds: tuple[str, ...]
    # items carry ``choices``: the options of a question, or the class labels
    choices: bool
    # the function that scores one record: a "module:attribute" target, or (an extension's) the function itself
    scorer: str | Scorer
    # its metrics need the language a reply is written in (BLEU's tokenizer: babeleval.score.bleu_tokenizers);
    # the task says which for each grid language (``Task.target_language``)
    target_language: bool = False

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.default_metrics)

    def reported_metrics(self, mode: str, listed: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """What a combination reports: the metrics its template lists, else the family's defaults for the mode."""
        return tuple(listed) if listed is not None else self.default_metrics[mode]


_SCORE = f"{__name__.split('.')[0]}.score"  # the scoring stage, named, not imported
_SCORERS = f"{_SCORE}.scorers"

_BUILT_IN = (
    Family("multiple_choice", {"loglikelihood": ("acc", "acc_norm"), "generate": ("acc", "parse_failure_rate")},
           parser_kinds=("letter", "label"), choices=True, scorer=f"{_SCORERS}:score_choice"),
    Family("classification", {"loglikelihood": ("acc", "acc_norm", "balanced_acc", "macro_f1"),
                              "generate": ("acc", "balanced_acc", "macro_f1", "parse_failure_rate")},
           parser_kinds=("label", "letter"), choices=True, scorer=f"{_SCORERS}:score_choice"),
    Family("extractive_qa", {"generate": ("exact_match", "f1", "parse_failure_rate")},
           parser_kinds=("text",), choices=False, scorer=f"{_SCORERS}:score_extractive_qa"),
    Family("translation", {"generate": ("bleu", "chrf", "parse_failure_rate")}, parser_kinds=("text",), choices=False,
           scorer=f"{_SCORERS}:score_translation", target_language=True),
    Family("math", {"generate": ("acc", "parse_failure_rate")}, parser_kinds=("number",), choices=False,
           scorer=f"{_SCORERS}:score_math"),
    # an lm-eval generate_until task: its metrics are its filter pipelines' (babeleval.tasks.lmeval_catalogue); its
    # replies are read by the task's own filters and scored by lm-eval's exact_match, not by a babeleval parser
    Family("lmeval_generate", {"generate": ("parse_failure_rate",)}, parser_kinds=(), choices=False,
           scorer=f"{_SCORE}.lmeval_filters:score_filtered"),
)


def _scorer(family: Family) -> Any:
    return lazy(family.scorer) if isinstance(family.scorer, str) else family.scorer


FAMILIES: Registry[Family] = Registry("task family", ((family.name, family) for family in _BUILT_IN))
# each family's scorer, by the family's name; a target is imported when scoring first asks for it
SCORERS: Registry[Scorer] = Registry("scorer", ((family.name, _scorer(family)) for family in _BUILT_IN))


def register(family: Family) -> Family:
    """Add a task family (an extension file params.yaml lists under ``modules``): its name, metrics, parser
    kinds, choices and scorer in one place; a name taken is refused."""
    FAMILIES.add(family.name, family)
    SCORERS.add(family.name, _scorer(family))
    return family


def get_family(name: str) -> Family:
    return FAMILIES[name]
