import logging

from babeleval.core import joblog
from babeleval.core.jsonl import read_jsonl, write_jsonl
from babeleval.prompts.record import PromptRecord
from babeleval.prompts.render import requests_for
from babeleval.prompts.templates import load_template

joblog.setup(snakemake.log[0])
record = PromptRecord.from_json(snakemake.params.record)
template = load_template(record.task, record.template)
requests = requests_for(template, record, lambda language, part: read_jsonl(record.file(language, part)))
write_jsonl(snakemake.output[0], requests)
logging.info("%d prompts", len(requests))
