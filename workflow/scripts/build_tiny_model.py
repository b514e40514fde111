from babeleval import joblog, tiny

joblog.setup(snakemake.log[0])
tiny.build(snakemake.output[0], snakemake.input.data, seed=snakemake.params.seed)
