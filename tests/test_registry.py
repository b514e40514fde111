"""The one registry helper every registry uses (babeleval.core.registry): taken names, unknown names, lazy targets."""

from __future__ import annotations

import os.path

import pytest

from babeleval.core.errors import ConfigError
from babeleval.core.registry import Lazy, Registry, lazy
from babeleval.tasks.families import FAMILIES, SCORERS


def test_a_taken_name_is_refused_and_an_unknown_one_names_the_closest():
    things = Registry("thing", [("apple", 1), ("apricot", 2)])
    with pytest.raises(ConfigError, match=r"^thing 'apple' is already registered; rename it$"):
        things.add("apple", 3)
    assert things["apple"] == 1
    with pytest.raises(ConfigError, match=r"^unknown thing 'aple' \(known: apple, apricot; did you mean 'apple'\?\)$"):
        things["aple"]
    with pytest.raises(ConfigError, match=r"^unknown thing 'zebra' \(known: apple, apricot\)$"):  # nothing close
        things["zebra"]
    assert things.get("zebra") is None and "zebra" not in things  # asking whether is not an error


def test_a_lazy_target_is_imported_when_first_asked_for():
    things = Registry("thing", [("join", lazy("os.path:join"))])
    assert isinstance(dict.__getitem__(things, "join"), Lazy)  # not imported at registration
    assert things["join"] is os.path.join
    assert dict.__getitem__(things, "join") is os.path.join  # imported once
    things.add("missing", lazy("babeleval.nowhere:score"))
    with pytest.raises(ConfigError, match=r"^thing 'missing': cannot load 'babeleval\.nowhere:score' \(No module"):
        things["missing"]
    with pytest.raises(ConfigError, match=r"'babeleval\.score\.scorers': a lazy target is written 'module:attribute'"):
        lazy("babeleval.score.scorers")


def test_every_built_in_family_has_a_scorer_that_loads():
    assert list(SCORERS) == list(FAMILIES)
    for name in FAMILIES:
        assert callable(SCORERS[name]), name
