from babeleval.core import joblog
from babeleval.generate import tiny_model as tiny

joblog.setup(snakemake.log[0])
tiny.build(snakemake.output[0], snakemake.input.data, seed=snakemake.params.seed)
