"""How a metric is recomputed on a resample of items, for intervals and paired tests: each metric of the registry
(``babeleval.score.metrics``) declares one of ``ItemMean``, ``CorpusStatistics`` or ``Recomputed``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

Record = dict[str, Any]


def item_value(name: str) -> Callable[[Record], Any]:
    """A record's ``name`` (None where it has none): the per-item value of an ``ItemMean``."""
    return lambda record: record.get(name)


@dataclass(frozen=True)
class ItemMean:
    """The mean of one value per item, ``value(record)``; an item whose value is None does not count."""

    value: Callable[[Record], float | bool | None]
    outcome: bool = False  # the value is right/wrong: paired tests use the exact McNemar test
    column: str | None = None  # the record field ``value`` reads as it is (``item_outcome``), where it is one
    bootstrap: ClassVar[str] = "items"


def item_outcome(column: str) -> ItemMean:
    """The share of items right, each item's right/wrong outcome the record's ``column`` (a bool)."""
    return ItemMean(item_value(column), outcome=True, column=column)


@dataclass(frozen=True)
class Statistics:
    """Sufficient statistics per record, and ``score``: the metric's value from statistics summed over records
    (a sequence, or a numpy row of a resample: returned as computed, float32 stays float32)."""

    rows: tuple[tuple[int, ...], ...]
    score: Callable[[Any], Any]


@dataclass(frozen=True)
class CorpusStatistics:
    """Per-item sufficient statistics, summed over a resample and turned into a score, as sacrebleu's
    bootstrap and paired test do: ``statistics(records, **options)``."""

    statistics: Callable[..., Statistics]
    bootstrap: ClassVar[str] = "corpus"


@dataclass(frozen=True)
class Recomputed:
    """The metric computed again over each resample of the records (macro-F1, balanced accuracy, SQuAD)."""

    bootstrap: ClassVar[str] = "items"


Resampling = ItemMean | CorpusStatistics | Recomputed
