"""`snakemake --lint` reports nothing for the whole workflow (every rule file the Snakefile includes)."""

import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.workflow


def test_snakemake_lint_is_clean():
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Lints for" not in out, out[-6000:]
