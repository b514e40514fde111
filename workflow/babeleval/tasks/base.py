"""What every task declares, and the canonical item of each task family.

A task turns its dataset's official files (or the Hugging Face copy) into
canonical items, one list per language. The base class decides, in one place
(``rows`` and ``files``), whether a source is local files or the hub; a task
declares the rest:

- ``NAME``, and ``FAMILY``: how items are prompted and scored
  (``babeleval.tasks.families``);
- ``local_files(source, language, root, split, options)``: the official files
  a local source holds for one language and split;
- ``read_local(files, language, split)``: their rows (default: JSON Lines or
  a JSON array per file);
- ``hub_config(language, options)``: the hub dataset's config for a language
  (default: the language code itself; a source's ``config`` overrides it);
- ``items(rows, language, where, options)``: the canonical items of those
  rows, each checked (a malformed row raises ``DataError`` naming ``where``
  and the row);
- ``SPLITS``: the split each part reads by default, per source kind;
- ``FEWSHOT_PART``: ``"train"`` where exemplars come from a separate split
  (``part="fewshot"``); ``None`` where they come from the evaluated rows;
- ``EVAL_SHUFFLE_SEED``: where the protocol shuffles the evaluated items
  before an item limit applies (JGLUE: 42), else ``None``;
- ``OPTIONS``: extra keys a params.yaml task entry may set, with defaults;
- ``LANGUAGES``: the only languages the dataset has, where it is fixed.

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
- math: ``question``, ``answer`` (canonical number string);
- lmeval_generate (an lm-eval generate_until task, ``babeleval.tasks.lmeval``): ``lmeval_context`` (lm-eval's
  prompt), ``lmeval_task``, ``answer`` (the reference lm-eval compares the filtered reply with, as text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.errors import DataError
from .sources import read_hub, read_json_records

# The parts of a task's data: the evaluated rows, and the rows exemplars are drawn from where the protocol
# has a split of its own for them (``Task.FEWSHOT_PART``)
EVAL, FEWSHOT = "eval", "fewshot"
LOCAL = "local"  # a source's kind: official files in a directory (the other: "hf", the Hugging Face hub)


def is_local(source: dict[str, Any]) -> bool:
    """Whether a task entry's source is official files on this machine (else a hub dataset, downloaded by the
    job that prepares it)."""
    return source["kind"] == LOCAL

Rows = list[dict[str, Any]]


class Task:
    """Base for task objects: where rows come from, decided once; the defaults of the interface above."""

    NAME = ""
    FAMILY = ""
    FEWSHOT_PART: str | None = None
    EVAL_SHUFFLE_SEED: int | None = None
    OPTIONS: dict[str, Any] = {}
    LANGUAGES: tuple[str, ...] | None = None  # None: whatever the data has
    SPLITS: dict[str, dict[str, str]] = {LOCAL: {EVAL: "test", FEWSHOT: "test"}, "hf": {EVAL: "test", FEWSHOT: "test"}}

    @property
    def name(self) -> str:
        return self.NAME

    def load(self, source: dict[str, Any], language: str, root: str | Path = ".", part: str = EVAL,
             options: dict[str, Any] | None = None) -> Rows:
        """The canonical items of one language and part, in dataset order."""
        rows, where = self.rows(source, language, root, part, options)
        return self.items(rows, language, where, self.options(options))

    def rows(self, source: dict[str, Any], language: str, root: str | Path = ".", part: str = EVAL,
             options: dict[str, Any] | None = None) -> tuple[Rows, str]:
        """The official rows of one language and part, and where they were read (for messages)."""
        self.check_language(language)
        split = self.split(source, part)
        if is_local(source):
            files = self.local_files(source, language, root, split, self.options(options))
            rows = self.read_local(files, language, split)
            return rows, str(files[0]) if len(files) == 1 else f"{files[0].parent}/*{files[0].suffix}"
        return read_hub(source, source.get("config") or self.hub_config(language, self.options(options)), split,
                        language)

    def files(self, source: dict[str, Any], language: str, root: str | Path = ".", part: str = EVAL,
              options: dict[str, Any] | None = None) -> list[Path]:
        """The official files a source reads for one language and part (none for a hub source): the rules'
        inputs (editing one reruns preparation), the hashes in provenance, the files checked while planning."""
        if not is_local(source):
            return []
        self.check_language(language)
        return self.local_files(source, language, root, self.split(source, part), self.options(options))

    def check_language(self, language: str) -> None:
        if self.LANGUAGES is not None and language not in self.LANGUAGES:
            raise DataError(f"task '{self.NAME}' has no language '{language}' (it has: {', '.join(self.LANGUAGES)})")

    def split(self, source: dict[str, Any], part: str) -> str:
        """The split a part reads: ``source.split`` / ``source.fewshot_split``, else the task's default for the kind."""
        key = "split" if part == EVAL else "fewshot_split"
        return source.get(key) or self.SPLITS[source["kind"]][part]

    def options(self, options: dict[str, Any] | None) -> dict[str, Any]:
        return {**self.OPTIONS, **(options or {})}

    def target_language(self, language: str, options: dict[str, Any] | None = None) -> str:
        """The language a reply to an item of grid language ``language`` is written in: the item's own, unless
        the task asks for another (read where the family's metrics need it: ``Family.target_language``)."""
        return language

    # -- what a task defines --------------------------------------------------------------------------

    def local_files(self, source: dict[str, Any], language: str, root: str | Path, split: str,
                    options: dict[str, Any]) -> list[Path]:
        raise NotImplementedError

    def read_local(self, files: list[Path], language: str, split: str) -> Rows:
        """The rows of a local source's files: JSON Lines (or a JSON array) in each."""
        return [row for path in files for row in read_json_records(path, f"{self.NAME} {split}")]

    def hub_config(self, language: str, options: dict[str, Any]) -> str | None:
        return language

    def items(self, rows: Rows, language: str, where: str, options: dict[str, Any]) -> Rows:
        raise NotImplementedError
