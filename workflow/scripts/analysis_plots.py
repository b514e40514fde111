import logging
from pathlib import Path

import pandas as pd

from babeleval import joblog
from babeleval.analysis import plots

joblog.setup(snakemake.log[0])
leaderboard = pd.read_csv(snakemake.input.leaderboard)
rates = pd.read_csv(snakemake.input.rates)
draw = {"heatmap": lambda t, p: plots.heatmap(leaderboard, t, p),
        "template_spread": lambda t, p: plots.template_spread(leaderboard, t, p),
        "parse_failures": lambda t, p: plots.parse_failures(rates, t, p)}
for path in snakemake.output:
    task, name = Path(path).parent.name, Path(path).stem
    draw[name](task, path)
    logging.info("wrote %s", path)
