from babeleval import joblog, tables

joblog.setup(snakemake.log[0])
tables.write_tables(snakemake.input[0], snakemake.output.by_template, snakemake.output.by_language)
