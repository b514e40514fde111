import logging

from babeleval.core import joblog
from babeleval.analysis import variation, variation_fragment, variation_plots
from babeleval.analysis.records import load_raw, write_csv
from babeleval.core.jsonl import atomic_open

joblog.setup(snakemake.log[0])
settings = snakemake.params.settings
raw = load_raw(snakemake.input.raw)
matrices = variation.outcome_matrices(raw)
spread = variation.spread_table(matrices, settings["samples"], settings["confidence"], settings["seed"])
tables = {"spread": spread, "axes": variation.axes_table(matrices),
          "decomposition": variation.decomposition_table(matrices), "ranks": variation.ranks_table(matrices),
          "sensitivity": variation.sensitivity_table(spread, settings["permutations"], settings["seed"],
                                                          settings["language_groups"])}
for key, frame in tables.items():
    write_csv(frame, snakemake.output[key])
variation_plots.variation_figure(matrices, spread, snakemake.output.figure)
with atomic_open(snakemake.output.fragment) as handle:
    handle.write(variation_fragment.render(tables, snakemake.output.figure,
                                           {key: snakemake.output[key] for key in tables}))
logging.info("%d families x (model, language) studied", len(matrices))
