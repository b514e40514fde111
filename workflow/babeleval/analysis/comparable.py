"""Which cells a task's headline averages, so that models are compared like with like.

A model's headline number for a task is a mean over (language, template) cells. Two models' means compare only
when they are over the same cells: a chat model that cannot score a log-likelihood template, or a model entry
that runs a subset of the templates (``babeleval.grid.holes``), would otherwise be averaged over other templates
than the rest. So, per task and headline metric:

- the **shared cells** are the (language, template) cells every model has a value for; each model's headline is
  its mean over them, and says what of its own it leaves out;
- where the models share no cell, each model's mean is over its own cells, which it names, and the headline is
  marked **not comparable** across models.

One owner for the rule: the leaderboard's metrics.json (and headline.json, for ``dvc exp show``), the models x
tasks table and the report's first screen all read it from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

Cell = tuple[str, str]  # language, template
# the suffix of a headline's name (metrics.json, headline.json) where the models share no cell
NOT_COMPARABLE = "_not_comparable"


@dataclass(frozen=True)
class HeadlineCells:
    """A task's headline cells for one model: those averaged, and those of its own left out."""

    model: str
    cells: tuple[Cell, ...]
    left_out: tuple[Cell, ...]
    comparable: bool

    @property
    def templates(self) -> tuple[str, ...]:
        return tuple(sorted({template for _, template in self.cells}))

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted({language for language, _ in self.cells}))

    def held(self) -> str:
        """``templates a, b; languages x, y``: what the mean is over, for a mean that is not comparable."""
        return f"templates {', '.join(self.templates)}; languages {', '.join(self.languages)}"

    def left_out_text(self) -> str:
        """``template paper (2 languages)``: the model's cells its headline leaves out, grouped by template."""
        by_template: dict[str, list[str]] = {}
        for language, template in self.left_out:
            by_template.setdefault(template, []).append(language)
        return "; ".join(f"template {t} ({len(langs)} language{'s' if len(langs) > 1 else ''})"
                         for t, langs in sorted(by_template.items()))


def cells_of(frame: pd.DataFrame) -> dict[str, set[Cell]]:
    """model -> the (language, template) cells with a value, in one task's rows of one metric."""
    present = frame.dropna(subset=["value"])
    out: dict[str, set[Cell]] = {}
    for model, language, template in zip(present["model"], present["language"], present["template"]):
        out.setdefault(str(model), set()).add((str(language), str(template)))
    return out


def headline_cells(frame: pd.DataFrame) -> dict[str, HeadlineCells]:
    """model -> its headline cells (module docstring), from one task's leaderboard rows of its headline metric."""
    own = cells_of(frame)
    if not own:
        return {}
    shared = set.intersection(*own.values())
    out = {}
    for model, cells in sorted(own.items()):
        used = shared if shared else cells
        out[model] = HeadlineCells(model, tuple(sorted(used)), tuple(sorted(cells - used)), comparable=bool(shared))
    return out


def rows_of(frame: pd.DataFrame, cells: HeadlineCells) -> pd.DataFrame:
    """The model's rows of ``frame`` in its headline cells."""
    keys = set(cells.cells)
    mask = pd.Series([(m == cells.model and (lang, t) in keys)
                      for m, lang, t in zip(frame["model"], frame["language"], frame["template"])],
                     index=frame.index, dtype=bool)
    return frame.loc[mask]


def comparable_task(cells: dict[str, HeadlineCells]) -> bool:
    """Whether a task's headline numbers compare across its models (one model: nothing to compare, so yes)."""
    return all(c.comparable for c in cells.values()) or len(cells) < 2

