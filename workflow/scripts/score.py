import logging

from babeleval.core import joblog
from babeleval.score import job, provenance

joblog.setup(snakemake.log[0])
w = snakemake.wildcards
# the combination's resolved record (babeleval.grid.records): its metrics and what they need, and its provenance
summary = job.score_files(
    generations=snakemake.input.generations,
    template_task=w.task,
    template_name=w.template,
    raw_out=snakemake.output.raw,
    scores_out=snakemake.output.scores,
    labels={"model": w.model, "task": w.task, "language": w.language, "template": w.template},
    metric_options=snakemake.params.record["metric_options"],
    provenance=provenance.for_scores(config=snakemake.config, model=w.model, task=w.task, language=w.language,
                                     template=w.template, generations=snakemake.input.generations,
                                     resolved=snakemake.params.record,
                                     prompts=snakemake.input.prompts),
)
logging.info("%s", summary["metrics"])
