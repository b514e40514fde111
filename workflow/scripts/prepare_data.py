import logging

from babeleval.core import joblog
from babeleval.tasks import lmeval
from babeleval.core.jsonl import write_jsonl
from babeleval.tasks import get_task

joblog.setup(snakemake.log[0])
lmeval.register(snakemake.config.get("tasks"))  # the grid's lm-eval tasks, by name
p = snakemake.params
items = get_task(snakemake.wildcards.task).load(p.source, snakemake.wildcards.language, part=p.part, options=p.options)
write_jsonl(snakemake.output[0], items)
logging.info("%d items", len(items))
