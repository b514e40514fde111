import logging

from babeleval.core import joblog
from babeleval.tasks import lmeval
from babeleval.core.jsonl import read_jsonl, synced_at_end, write_jsonl
from babeleval.prompts.record import PromptRecord
from babeleval.prompts.render import budgeted_requests, requests_for
from babeleval.prompts.templates import load_template

joblog.setup(snakemake.log[0])
lmeval.register(snakemake.config.get("tasks"))  # the grid's lm-eval tasks, by name
# one prompt record per language, in the order of the outputs; the template is loaded once
records = [PromptRecord.from_json(record) for record in snakemake.params.records]
template = load_template(records[0].task, records[0].template)
plan = records[0].budget  # a budgeted variant set's: its design is drawn from every language's items at once
kept = None
if plan is not None:
    kept = budgeted_requests(plan, records[0].template, {
        record.language: requests_for(template, record, lambda language, part: read_jsonl(record.file(language, part)))
        for record in records})
# a prompts file per language, a hundred or more per job: made durable together at the end (babeleval.core.jsonl)
with synced_at_end():
    for record, out in zip(records, snakemake.output, strict=True):
        requests = kept[record.language] if kept is not None else requests_for(
            template, record, lambda language, part: read_jsonl(record.file(language, part)))
        write_jsonl(out, requests)
        logging.info("%s: %d prompts%s", record.language, len(requests),
                     " (a budgeted variant's cells)" if plan else "")
