from babeleval.core import joblog
from babeleval.core.progress import heartbeat
from babeleval.generate import gguf

joblog.setup(snakemake.log[0])
with heartbeat(f"converting {snakemake.input[0]}"):  # the dequantizing load: half a minute and more
    gguf.convert(snakemake.input[0], snakemake.output[0])
