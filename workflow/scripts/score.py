import logging

from babeleval.core import joblog
from babeleval.tasks import lmeval
from babeleval.core.jsonl import synced_at_end
from babeleval.score import job, provenance

joblog.setup(snakemake.log[0])
lmeval.register(snakemake.config.get("tasks"))  # the grid's lm-eval tasks, by name
model = snakemake.wildcards.model
out, inp = snakemake.output, snakemake.input
# three files per combination, hundreds per job: made durable together at the end (babeleval.core.jsonl)
with synced_at_end():
    # one resolved record per combination (babeleval.grid.records), in the order of the job's files: its metrics and
    # what they need, and its provenance
    for record, generations, prompts, raw, scores, outcomes, extractions in zip(
            snakemake.params.records, inp.generations, snakemake.params.prompts, out.raw, out.scores, out.outcomes,
            snakemake.params.extractions, strict=True):
        task, language, template = (record["prompts"][key] for key in ("task", "language", "template"))
        summary = job.score_files(
            generations=generations,
            record=record,
            raw_out=raw,
            scores_out=scores,
            outcomes_out=outcomes,
            extractions=extractions,
            labels={"model": model, "task": task, "language": language, "template": template},
            # the model's entry from the run's config, as the generation job reads it (a speed-only setting changes
            # no params); the task's source and options as validation made its entry (the rule's params)
            provenance=provenance.for_scores(model_entry=snakemake.config["models"][model],
                                             source=snakemake.params.source, options=snakemake.params.task_options,
                                             model=model, task=task, language=language, template=template,
                                             generations=generations, resolved=record, prompts=prompts),
        )
        logging.info("%s %s: %s", language, template, summary["metrics"])
