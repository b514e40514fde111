"""CPU jobs (data, prompts, scoring, aggregation) must never import torch or transformers."""

import subprocess
import sys

MODULES = ["babeleval.grid.params", "babeleval.prompts.render", "babeleval.score.job", "babeleval.analysis.leaderboard",
           "babeleval.tasks", "babeleval.cli.show", "babeleval.generate.job", "babeleval.tasks.lmeval",
           "babeleval.analysis.local_vs_translated"]


def test_cpu_modules_do_not_import_torch():
    code = ("import sys\n" + "".join(f"import {m}\n" for m in MODULES)
            + "heavy = [m for m in ('torch', 'transformers', 'datasets', 'lm_eval') if m in sys.modules]\n"
            + "assert not heavy, heavy\n")
    subprocess.run([sys.executable, "-c", code], check=True)
