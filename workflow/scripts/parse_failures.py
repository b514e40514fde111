import logging

from babeleval.core import joblog
from babeleval.analysis import parse_failures
from babeleval.analysis.records import PARSE_RESULTS, load_outcomes, write_csv

joblog.setup(snakemake.log[0])
tables = parse_failures.tables(load_outcomes(snakemake.params.outcomes, PARSE_RESULTS))
write_csv(tables["rates"], snakemake.output.rates)
write_csv(tables["reasons"], snakemake.output.reasons)
write_csv(tables["reasoning"], snakemake.output.reasoning)
write_csv(tables["extractor"], snakemake.output.extractor)
logging.info("%d combinations, %d reason rows", len(tables["rates"]), len(tables["reasons"]))
