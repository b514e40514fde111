"""Task families: what a family's items are asked in and read as, one row of a table per family.

A task names its family (``Task.FAMILY``); everything that depends on the family reads this table:
which scoring modes a template may use, what a combination reports when its template names no
metrics, which kinds of answer parser can read its generated answers, and whether its items carry
choices. How one record is scored is ``babeleval.score.scorers``; which metrics can be computed for
a family is said by each metric (``babeleval.score.metrics``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..core.errors import ConfigError


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

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.default_metrics)

    def reported_metrics(self, mode: str, listed: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """What a combination reports: the metrics its template lists, else the family's defaults for the mode."""
        return tuple(listed) if listed is not None else self.default_metrics[mode]


FAMILIES: dict[str, Family] = {family.name: family for family in (
    Family("multiple_choice", {"loglikelihood": ("acc", "acc_norm"), "generate": ("acc", "parse_failure_rate")},
           parser_kinds=("letter", "label"), choices=True),
    Family("classification", {"loglikelihood": ("acc", "acc_norm", "balanced_acc", "macro_f1"),
                              "generate": ("acc", "balanced_acc", "macro_f1", "parse_failure_rate")},
           parser_kinds=("label", "letter"), choices=True),
    Family("extractive_qa", {"generate": ("exact_match", "f1", "parse_failure_rate")},
           parser_kinds=("text",), choices=False),
    Family("translation", {"generate": ("bleu", "chrf", "parse_failure_rate")}, parser_kinds=("text",), choices=False),
    Family("math", {"generate": ("acc", "parse_failure_rate")}, parser_kinds=("number",), choices=False),
    # an lm-eval generate_until task: its metrics are its filter pipelines' (babeleval.tasks.lmeval_catalogue)
    Family("lmeval_generate", {"generate": ("parse_failure_rate",)}, parser_kinds=(), choices=False),
)}


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise ConfigError(f"unknown task family '{name}' (known: {', '.join(FAMILIES)})") from None
