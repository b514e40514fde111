from babeleval.core import joblog
from babeleval.generate import gguf

joblog.setup(snakemake.log[0])
gguf.convert(snakemake.input[0], snakemake.output[0])
