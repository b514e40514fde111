from babeleval.analysis import summary_tables
from babeleval.core import joblog

joblog.setup(snakemake.log[0])
summary_tables.write_tables(snakemake.input[0], snakemake.output.by_template, snakemake.output.by_language)
