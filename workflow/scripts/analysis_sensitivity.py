import logging


from babeleval import joblog
from babeleval.names import read_results_csv
from babeleval.analysis import sensitivity
from babeleval.analysis.records import write_csv

joblog.setup(snakemake.log[0])
leaderboard = read_results_csv(snakemake.input[0])
table = sensitivity.template_sensitivity(leaderboard)
ranks = sensitivity.rank_stability(leaderboard)
write_csv(table, snakemake.output.sensitivity)
write_csv(ranks, snakemake.output.ranks)
logging.info("%d sensitivity rows, %d rank-correlation rows", len(table), len(ranks))
