"""Task registry: each task turns its dataset's official files into canonical items.

The interface every task offers, and the canonical item of each task family,
are described in ``babeleval.tasks.base``; every task is an object of a
``base.Task`` subclass. params.schema.yaml lists the same names (a test checks).
"""

from __future__ import annotations

from ..errors import ConfigError
from .base import Task
from .belebele import Belebele
from .jglue import JNLI, JaQuAD, JCommonsenseQA, JSQuAD, MARCja
from .suite import (SIB200, FloresTopics, GlobalMMLU, MGSMTask, TranslationFrom, TranslationTo, UhuraARC,
                    UhuraTruthfulQA)

TASKS: dict[str, Task] = {task.NAME: task for task in (
    Belebele(), JCommonsenseQA(), JNLI(), MARCja(), JSQuAD(), JaQuAD(), GlobalMMLU(), UhuraARC(), UhuraTruthfulQA(),
    MGSMTask(), TranslationFrom(), TranslationTo(), FloresTopics(), SIB200())}


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ConfigError(f"unknown task '{name}' (known: {', '.join(sorted(TASKS))})") from None
