import logging

from babeleval.core import joblog
from babeleval.analysis import item_difficulty
from babeleval.analysis.records import CORRECTNESS, load_items, load_outcomes, write_csv

joblog.setup(snakemake.log[0])
raw = load_outcomes(snakemake.params.outcomes, CORRECTNESS)
items = load_items(snakemake.input.prepared)
tables = item_difficulty.difficulty(raw, items)
gaps = item_difficulty.crosslingual(raw, pivot=snakemake.params.pivot, items=items)
write_csv(tables["items"], snakemake.output.per_item)
write_csv(tables["buckets"], snakemake.output.buckets)
write_csv(tables["patterns"], snakemake.output.patterns)
write_csv(gaps["gaps"], snakemake.output.gaps)
write_csv(gaps["items"], snakemake.output.gap_items)
logging.info("%d items, %d cross-lingual rows", len(tables["items"]), len(gaps["gaps"]))
