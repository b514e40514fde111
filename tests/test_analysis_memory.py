"""Each analysis job's declared memory covers what its step uses: every step of bench/analysis_scale.py run as
the workflow runs it (its own process, the workflow's script, its rule's inputs), on a small study laid out from
the outcome tables scoring writes. The full size's figures are the bench's (bench/analysis_scale.py)."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.bench

# nine processes, each importing pandas (and matplotlib): 13 s on an idle 2-core machine (30-60 s on a busy one)


def test_every_analysis_step_stays_within_its_declared_memory():
    run = subprocess.run([sys.executable, str(ROOT / "bench/analysis_scale.py"), "--models", "2", "--languages", "3",
                          "--items", "40"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert [row["step"] for row in rows] == ["leaderboard", "significance", "parse_failures", "item_difficulty",
                                             "variation_analysis", "template_sensitivity", "summary_tables", "plots",
                                             "report"]
    for row in rows:
        assert 50 < row["peak_mb"] <= row["declared_mb"], row
