from babeleval.core import joblog
from babeleval.generate.job import shared_prefix_job

joblog.setup(snakemake.log[0])
p = snakemake.params
shared_prefix_job(
    # the whole model entry, from the run's config: params.model_outputs holds only the settings that decide a rerun
    entry=snakemake.config["models"][snakemake.wildcards.model],
    model_path=p.model_path,
    settings=p.settings,
    labels=p.labels,
    prompts=snakemake.input.prompts,
    usage=snakemake.output.usage,
    cache_path=p.cache,
    threads=snakemake.threads,
)
