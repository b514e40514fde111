import logging

from babeleval.analysis import leaderboard
from babeleval.analysis.settings import AnalysisSettings
from babeleval.core import joblog
from babeleval.grid import headline, template_hashes

joblog.setup(snakemake.log[0])
frame = leaderboard.write_outputs(snakemake.input.scores, snakemake.output.csv, snakemake.output.md,
                                  snakemake.output.metrics, outcome_files=snakemake.params.outcomes,
                                  settings=AnalysisSettings(**snakemake.params.settings),
                                  omitted=snakemake.input.omitted)
# DVC's metrics, under short names, the edited tasks first (results/template_hashes.yaml, written at the run's start)
headline.write(snakemake.output.metrics, snakemake.output.headline, template_hashes.task_order())
logging.info("%d leaderboard rows", len(frame))
