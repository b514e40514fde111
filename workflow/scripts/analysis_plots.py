import logging
from pathlib import Path

from babeleval import joblog
from babeleval.analysis import plots
from babeleval.names import read_results_csv

joblog.setup(snakemake.log[0])
leaderboard = read_results_csv(snakemake.input.leaderboard)
rates = read_results_csv(snakemake.input.rates)
draw = {"heatmap": lambda t, p: plots.heatmap(leaderboard, t, p),
        "template_spread": lambda t, p: plots.template_spread(leaderboard, t, p),
        "parse_failures": lambda t, p: plots.parse_failures(rates, t, p)}
for path in snakemake.output:
    task, name = Path(path).parent.name, Path(path).stem
    draw[name](task, path)
    logging.info("wrote %s", path)
