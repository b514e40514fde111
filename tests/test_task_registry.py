"""The task registry: every task is a ``Task`` object, and params.schema.yaml lists exactly the registered tasks."""

import yaml

from babeleval.families import DEFAULT_METRICS
from babeleval.tasks import TASKS, get_task
from babeleval.tasks.base import Task


def test_every_registered_task_is_a_task_object_under_its_name():
    for name, task in TASKS.items():
        assert isinstance(task, Task), name
        assert task.name == name and task.FAMILY in DEFAULT_METRICS, name
        assert task.FEWSHOT_PART in (None, "train") and set(task.options(None)) == set(task.OPTIONS), name
    assert get_task("belebele").FEWSHOT_PART is None  # exemplars from the evaluated rows


def test_the_schema_accepts_exactly_the_registered_tasks(repo_root):
    schema = yaml.safe_load((repo_root / "workflow/schemas/params.schema.yaml").read_text(encoding="utf-8"))
    listed = schema["properties"]["tasks"]["propertyNames"]["enum"]
    assert sorted(listed) == sorted(TASKS), "params.schema.yaml's task list and babeleval.tasks.TASKS differ"
