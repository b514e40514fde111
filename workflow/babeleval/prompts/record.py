"""The resolved prompt record of one (task, language, template): everything rendering its prompts reads.

The planner (``babeleval.grid.resolve``) makes one per (task, language, template) of the grid, and one for a
template outside the grid by the same rules (a variant previewed by ``show`` or tried by ``search``). The
rendering job, ``show`` and ``search`` build an item's requests from it alike
(``babeleval.prompts.render.requests_for``), the scoring job and provenance read its few-shot plan, and it is
written into every scores file (the ``prompts`` of the combination's record).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..core import paths
from ..tasks.base import EVAL
from .budget_design import StudyPlan
from .templates import FewShot


@dataclass(frozen=True)
class PromptRecord:
    task: str
    language: str
    template: str
    data: str  # the prepared items
    # where exemplars come from: None for a zero-shot template; "fewshot" for the task's own exemplar
    # split (JGLUE: train); "eval" for the evaluated rows of the exemplar language
    exemplar_part: str | None
    exemplar_languages: tuple[str, ...]
    exemplar_files: tuple[str, ...]  # prepared files of the exemplar pool
    seed: int  # exemplar sampling
    shuffle_seed: int | None  # the protocol's shuffle of the evaluated items before the limit
    limit: int | None
    fewshot: FewShot  # the few-shot plan: how many exemplars, drawn how, in which language, joined by what
    # a budgeted variant set's plan: the template answers only the items its design gives it (budget_design)
    budget: StudyPlan | None = None

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> "PromptRecord":
        """The record as a scores file or a job's params hold it (``CombinationRecord.as_json``'s ``prompts``)."""
        tuples = {key: tuple(record[key]) for key in ("exemplar_languages", "exemplar_files")}
        budget = StudyPlan.from_json(record["budget"]) if record.get("budget") else None
        return cls(**{**record, **tuples, "fewshot": FewShot(**record["fewshot"]), "budget": budget})

    def as_json(self) -> dict[str, Any]:
        """The record as plain JSON types (tuples as lists); ``budget`` only where there is one, so that the records
        (rule params, scores provenance) of a grid without budgets stay as they were."""
        record = {key: value for key, value in asdict(self).items() if key != "budget"}
        if self.budget is not None:
            record["budget"] = self.budget.as_json()
        return {key: list(value) if isinstance(value, tuple) else value for key, value in record.items()}

    def file(self, language: str, part: str) -> str:
        """The prepared file of one (language, part) the record reads (``reads``)."""
        return prepared_file(self.task, language, part)

    def reads(self) -> list[tuple[str, str]]:
        """(language, part) of every data file the prompts are made from: the items, then the exemplar pool."""
        return [(self.language, EVAL)] + [(language, self.exemplar_part) for language in self.exemplar_languages]


def prepared_file(task: str, language: str, part: str = EVAL) -> str:
    """The prepared items of one (task, language) and part."""
    return (paths.PREPARED if part == EVAL else paths.PREPARED_FEWSHOT).format(task=task, language=language)
