import logging

from babeleval.core import joblog
from babeleval.core.jsonl import read_jsonl, write_jsonl
from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template

joblog.setup(snakemake.log[0])
w = snakemake.wildcards
template = load_template(w.task, w.template)
items = read_jsonl(snakemake.input.data)
pool = [row for path in snakemake.input.exemplars for row in read_jsonl(path)]
requests = build_requests(template, items, pool, seed=snakemake.params.seed, limit=snakemake.params.limit,
                          shuffle_seed=snakemake.params.shuffle_seed)
write_jsonl(snakemake.output[0], requests)
logging.info("%d prompts", len(requests))
