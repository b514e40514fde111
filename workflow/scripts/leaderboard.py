import logging

from babeleval import aggregate, joblog

joblog.setup(snakemake.log[0])
frame = aggregate.write_outputs(snakemake.input, snakemake.output.csv, snakemake.output.md, snakemake.output.metrics)
logging.info("%d leaderboard rows", len(frame))
