from babeleval.core import joblog
from babeleval.analysis import summary_tables as tables

joblog.setup(snakemake.log[0])
tables.write_tables(snakemake.input[0], snakemake.output.by_template, snakemake.output.by_language)
