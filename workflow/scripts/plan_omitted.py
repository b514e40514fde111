from babeleval.core import joblog
from babeleval.grid.plan import write_omitted

joblog.setup(snakemake.log[0])
write_omitted(snakemake.params.rows, snakemake.output[0])
