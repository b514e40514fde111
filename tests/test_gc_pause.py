"""A model loads with the cyclic garbage collector paused (babeleval.core.gc_pause), and nothing is kept alive by it."""

import dataclasses
import gc
import weakref

import pytest

from babeleval.core.gc_pause import collector_paused, imports_done
from babeleval.generate import backends


@pytest.fixture(autouse=True)
def collector_on():
    assert gc.isenabled()
    yield
    gc.unfreeze()  # the rest of the session collects as before
    gc.enable()


class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_the_collector_is_off_inside_and_on_after_with_what_survives_frozen():
    kept = []
    with collector_paused():
        assert not gc.isenabled()
        kept.append(Node())
        dropped = weakref.ref(Node())  # garbage made while paused
    assert gc.isenabled()
    assert dropped() is None  # collected at the pause's end, not frozen with the rest
    assert gc.get_freeze_count() > 0
    assert gc.is_tracked(kept[0])


def test_a_pause_inside_a_pause_leaves_the_end_to_the_outer_one():
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_back_on_after_a_failed_load():
    with pytest.raises(RuntimeError):
        with collector_paused():
            raise RuntimeError("weights missing")
    assert gc.isenabled()


def test_load_backend_loads_with_the_collector_paused(monkeypatch):
    seen = []

    def load(config, model_path):
        seen.append(gc.isenabled())
        return object()

    monkeypatch.setitem(backends.BACKENDS, "hf", dataclasses.replace(backends.BACKENDS["hf"], load=load))
    backends.load_backend({"backend": "hf", "model": "m"}, "m")
    assert seen == [False]
    assert gc.isenabled()


def test_a_dropped_hf_model_is_freed_though_frozen(tiny_model_dir):
    """Frozen objects are left out of cyclic collections: a model must go with its last reference."""
    backend = backends.load_backend({"backend": "hf", "builtin": "tiny-llama", "device": "cpu"}, str(tiny_model_dir))
    modules = [weakref.ref(module) for module in backend.model.modules()]  # layers the backend changed included
    del backend
    assert [module() for module in modules if module() is not None] == []


def test_after_imports_done_only_the_loads_garbage_is_collected():
    with collector_paused():
        imported = weakref.ref(Node())  # garbage an import made
        imports_done()
        loaded = weakref.ref(Node())  # garbage the load made: it may hold the model's data
    assert imported() is not None  # frozen with the imports, never walked again
    assert loaded() is None


def test_imports_done_outside_a_pause_freezes_nothing():
    before = gc.get_freeze_count()
    imports_done()
    assert gc.get_freeze_count() == before
