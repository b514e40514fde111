from babeleval.core import joblog, orphan_guard, paths
from babeleval.generate.job import generation_job

joblog.setup(snakemake.log[0])
p = snakemake.params
# an earlier job of these outputs still running (its Snakemake was killed) is waited for: never two at once
with orphan_guard.outputs_lock(snakemake.output):
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
        model=snakemake.wildcards.model,
        spend_file=paths.SPEND.format(model=snakemake.wildcards.model),
    )
