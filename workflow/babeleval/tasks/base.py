"""What every task declares, and the canonical item of each task family.

A task turns its dataset's official files (or the Hugging Face copy) into
canonical items, one list per language. It declares:

- ``FAMILY``: how items are prompted and scored (see ``babeleval.families``);
- ``load(source, language, root=".", part="eval", options=None)``: the items of
  one language; ``part="fewshot"`` gives the rows exemplars are drawn from
  (the train split where the protocol says so, else the evaluated rows);
- ``local_files(source, language, root=".", part="eval", options=None)``: the
  official files a local source reads for that language, so editing one
  reruns preparation;
- ``FEWSHOT_PART``: ``"train"`` where exemplars come from a separate split;
  ``None`` where they come from the evaluated rows;
- ``EVAL_SHUFFLE_SEED``: where the protocol shuffles the evaluated items
  before an item limit applies (JGLUE: 42), else ``None``;
- ``OPTIONS``: extra keys a params.yaml task entry may set, with defaults.

Canonical items, by family (every item also has ``id``, ``task``,
``language`` and ``group``: items sharing a context, never exemplars for each
other). The gold is always ``answer``; templates never see it for the item
they ask about:

- multiple_choice: ``question``, ``choices`` [str], ``answer`` (index), task
  extras (``passage``, ``subject``);
- classification: the text fields (``premise``/``hypothesis``, ``text``),
  ``label`` (the dataset's label name), ``answer`` (index into the task's
  ``LABELS``, or into ``choices`` where each item carries its own label set,
  as topic classification does); templates give the words the labels are
  scored as (``choices:`` in the template file);
- extractive_qa: ``title``, ``context``, ``question``, ``answer`` [gold spans];
- translation: ``source_text``, ``source_language``, ``target_language``,
  ``source_name``, ``target_name``, ``target_script``, ``answer`` (reference);
- math: ``question``, ``answer`` (canonical number string).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.errors import DataError


class Task:
    """Base for task objects: the defaults of the interface above."""

    NAME = ""
    FAMILY = ""
    FEWSHOT_PART: str | None = None
    EVAL_SHUFFLE_SEED: int | None = None
    OPTIONS: dict[str, Any] = {}
    LANGUAGES: tuple[str, ...] | None = None  # None: whatever the data has

    @property
    def name(self) -> str:
        return self.NAME

    def check_language(self, language: str) -> None:
        if self.LANGUAGES is not None and language not in self.LANGUAGES:
            raise DataError(f"task '{self.NAME}' has no language '{language}' (it has: {', '.join(self.LANGUAGES)})")

    def split(self, source: dict[str, Any], part: str, defaults: dict[str, dict[str, str]]) -> str:
        """The split a part reads: ``source.split`` / ``source.fewshot_split``, else the task's default for the kind."""
        key = "split" if part == "eval" else "fewshot_split"
        return source.get(key) or defaults[source["kind"]][part]

    def options(self, options: dict[str, Any] | None) -> dict[str, Any]:
        return {**self.OPTIONS, **(options or {})}

    def local_files(self, source: dict[str, Any], language: str, root: str | Path = ".", part: str = "eval",
                    options: dict[str, Any] | None = None) -> list[Path]:
        raise NotImplementedError

    def load(self, source: dict[str, Any], language: str, root: str | Path = ".", part: str = "eval",
             options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        raise NotImplementedError

