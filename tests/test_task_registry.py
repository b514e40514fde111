"""The task registry: every task is a ``Task`` object (the schema's task list: test_templates_all_tasks)."""

from babeleval.tasks.families import FAMILIES
from babeleval.tasks import TASKS, get_task
from babeleval.tasks.base import Task


def test_every_registered_task_is_a_task_object_under_its_name():
    for name, task in TASKS.items():
        assert isinstance(task, Task), name
        assert task.name == name and task.FAMILY in FAMILIES, name
        assert task.FEWSHOT_PART in (None, "train") and set(task.options(None)) == set(task.OPTIONS), name
    assert get_task("belebele").FEWSHOT_PART is None  # exemplars from the evaluated rows



def test_the_registry_is_every_task_the_package_defines_each_name_once():
    import importlib
    import pkgutil

    import babeleval.tasks as package

    names = [obj.NAME for info in pkgutil.iter_modules(package.__path__)
             for obj in vars(importlib.import_module(f"babeleval.tasks.{info.name}")).values()
             if isinstance(obj, type) and issubclass(obj, Task) and obj.NAME
             and obj.__module__ == f"babeleval.tasks.{info.name}"]
    assert sorted(names) == sorted(TASKS) and len(names) == len(set(names))
    assert list(TASKS)[0] == "belebele"  # module order: messages list Belebele first
