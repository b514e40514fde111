from babeleval.core import joblog
from babeleval.generate.builtin_models import get_builtin

joblog.setup(snakemake.log[0])
get_builtin(snakemake.wildcards.builtin).build(snakemake.output[0], list(snakemake.input), snakemake.params.seed)
