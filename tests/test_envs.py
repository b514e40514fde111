"""The conda environments in envs/ (for `snakemake --sdm conda`) agree with pyproject.toml.

Each envs/<kind>.yaml lists, under pip, exactly pyproject.toml's dependencies plus the extras its
`# babeleval extras:` line names, spelled the same; <kind>.post-deploy.sh installs the package
itself. Every runtime extra is in some environment, and the rules only name environments that exist.
"""

from __future__ import annotations

import os
import re
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from babeleval.generate.backends import BACKENDS
from conftest import ROOT

ENVS = ROOT / "envs"
KINDS = ("cpu", "gpu", "api", "vllm")
# extras for the machine that drives the workflow or runs the tests, not for jobs
TOOLING_EXTRAS = {"workflow", "test", "slurm"}
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def requirement_set(lines) -> dict[str, str]:
    out = {}
    for line in lines:
        req = Requirement(line)
        out[canonicalize_name(req.name)] = f"{''.join(sorted(req.extras))}{req.specifier}{req.marker or ''}"
    return out


def env_spec(kind: str) -> tuple[dict, list[str]]:
    text = (ENVS / f"{kind}.yaml").read_text(encoding="utf-8")
    match = re.search(r"^# babeleval extras:(.*)$", text, re.M)
    assert match, f"envs/{kind}.yaml: no '# babeleval extras: ...' line naming the pyproject extras it holds"
    extras = [e.strip() for e in match.group(1).split(",") if e.strip() and e.strip() != "(none)"]
    return yaml.safe_load(text), extras


def pip_list(spec: dict) -> list[str]:
    lists = [d["pip"] for d in spec["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(lists) == 1, "one pip: list expected"
    return lists[0]


@pytest.mark.parametrize("kind", KINDS)
def test_environment_matches_pyproject(kind):
    spec, extras = env_spec(kind)
    conda = [d for d in spec["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in conda and "pip" in conda
    optional = PYPROJECT["optional-dependencies"]
    unknown = [e for e in extras if e not in optional]
    assert not unknown, f"envs/{kind}.yaml names extras pyproject.toml does not have: {unknown}"
    expected = requirement_set(PYPROJECT["dependencies"] + [r for e in extras for r in optional[e]])
    actual = requirement_set(pip_list(spec))
    missing = {k: v for k, v in expected.items() if k not in actual}
    extra = {k: v for k, v in actual.items() if k not in expected}
    differ = {k: (actual[k], expected[k]) for k in expected.keys() & actual.keys() if actual[k] != expected[k]}
    assert not missing, f"envs/{kind}.yaml lacks what pyproject.toml requires: {missing}"
    assert not extra, f"envs/{kind}.yaml has packages pyproject.toml does not list (core + {extras}): {extra}"
    assert not differ, f"envs/{kind}.yaml and pyproject.toml disagree on versions (env, pyproject): {differ}"


@pytest.mark.parametrize("kind", KINDS)
def test_post_deploy_installs_the_package(kind):
    script = ENVS / f"{kind}.post-deploy.sh"
    assert script.is_file() and os.access(script, os.X_OK)
    assert re.search(r"pip install .*--no-deps -e \.$", script.read_text(encoding="utf-8"), re.M)


def test_every_runtime_extra_is_in_an_environment():
    covered = {e for kind in KINDS for e in env_spec(kind)[1]}
    runtime = set(PYPROJECT["optional-dependencies"]) - TOOLING_EXTRAS
    assert runtime <= covered, (f"pyproject extras in no envs/*.yaml: {sorted(runtime - covered)}; add each to the "
                                "'# babeleval extras:' line and pip list of the environment whose rules need it")


def test_rules_name_existing_environments():
    named = set()
    for smk in sorted((ROOT / "workflow/rules").glob("*.smk")):
        for path in re.findall(r"""["']\.\./\.\./envs/([^"']+)["']""", smk.read_text(encoding="utf-8")):
            assert (ENVS / path).is_file(), f"{smk.name}: conda environment envs/{path} does not exist"
            named.add(path)
    for backend in BACKENDS.values():  # a generation job's environment is its backend's (grid.rules.generation_env)
        assert (ROOT / backend.conda_env).is_file(), f"backend {backend.name}: {backend.conda_env} does not exist"
        named.add(backend.conda_env.removeprefix("envs/"))
    assert {"cpu.yaml", "gpu.yaml", "api.yaml", "vllm.yaml"} <= named
