import tempfile

from babeleval.core import joblog, orphan_guard
from babeleval.generate.job import JobFiles, answer_job
from babeleval.score.extraction import write_requests

joblog.setup(snakemake.log[0])
p = snakemake.params
# an earlier job of these outputs still running (its Snakemake was killed) is waited for: never two at once
with orphan_guard.outputs_lock(snakemake.output), tempfile.TemporaryDirectory(prefix="extraction-") as scratch:
    # scoring's rules say what to ask about each reply; the generation stage asks the extractor
    requests = write_requests(p.task, snakemake.wildcards.template, p.family, snakemake.input.generations, scratch)
    answer_job(
        # the extractor's whole entry, from the run's config: params.extractor_outputs holds only what decides a rerun
        entry=snakemake.config["models"][p.extractor],
        model_path=p.model_path,
        settings=p.decoding,
        files=JobFiles(requests, dict(zip(requests, snakemake.output.extractions, strict=True)), p.cache,
                       snakemake.output.usage),
        # the usage file lies under the model whose replies were read: it names the model asked, which the run
        # summary counts it under
        usage_fields={"model": p.extractor, "extraction": True},
        granted=int(getattr(snakemake.resources, p.api_resource)) if p.api_resource else None,
        threads=snakemake.threads,
    )
