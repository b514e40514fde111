from babeleval.core import joblog
from babeleval.generate.job import generation_job

joblog.setup(snakemake.log[0])
p = snakemake.params
generation_job(
    # the whole model entry, from the run's config: params.model_outputs holds only the settings that decide a rerun
    entry=snakemake.config["models"][snakemake.wildcards.model],
    model_path=p.model_path,
    templates=p.templates,
    settings=p.settings,
    languages=p.languages,
    prompts=snakemake.input.prompts,
    generations=snakemake.output.generations,
    usage=snakemake.output.usage,
    cache_path=p.cache,
    granted=int(getattr(snakemake.resources, p.api_resource)) if p.api_resource else None,
    threads=snakemake.threads,
)
