"""Task registry: each task turns its dataset's official files into canonical items.

The interface every task offers, and the canonical item of each task family,
are described in ``babeleval.tasks.base``. Belebele is a module with that
interface; the other tasks are objects of ``base.Task`` subclasses.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from . import belebele
from .jglue import JNLI, JaQuAD, JCommonsenseQA, JSQuAD, MARCja
from .suite import (SIB200, FloresTopics, GlobalMMLU, MGSMTask, TranslationFrom, TranslationTo, UhuraARC,
                    UhuraTruthfulQA)

TASKS: dict[str, Any] = {"belebele": belebele}
for _task in (JCommonsenseQA(), JNLI(), MARCja(), JSQuAD(), JaQuAD(), GlobalMMLU(), UhuraARC(), UhuraTruthfulQA(),
              MGSMTask(), TranslationFrom(), TranslationTo(), FloresTopics(), SIB200()):
    TASKS[_task.NAME] = _task


def get_task(name: str) -> Any:
    try:
        return TASKS[name]
    except KeyError:
        raise ConfigError(f"unknown task '{name}' (known: {', '.join(sorted(TASKS))})") from None
