from babeleval.core import joblog, orphan_guard
from babeleval.score.extraction import extraction_job

joblog.setup(snakemake.log[0])
p = snakemake.params
# an earlier job of these outputs still running (its Snakemake was killed) is waited for: never two at once
with orphan_guard.outputs_lock(snakemake.output):
    extraction_job(
        # the extractor's whole entry, from the run's config: params.extractor_outputs holds only what decides a rerun
        entry=snakemake.config["models"][p.extractor],
        extractor=p.extractor,
        model_path=p.model_path,
        task=p.task,
        template=snakemake.wildcards.template,
        family=p.family,
        generations=snakemake.input.generations,
        extractions=snakemake.output.extractions,
        usage=snakemake.output.usage,
        cache_path=p.cache,
        decoding=p.decoding,
        granted=int(getattr(snakemake.resources, p.api_resource)) if p.api_resource else None,
        threads=snakemake.threads,
    )
