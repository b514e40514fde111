import logging

from babeleval.analysis import variation, variation_fragment, variation_plots
from babeleval.analysis.records import CORRECTNESS, load_outcomes, write_csv
from babeleval.analysis.settings import AnalysisSettings
from babeleval.core import joblog
from babeleval.core.jsonl import atomic_open

joblog.setup(snakemake.log[0])
matrices = variation.outcome_matrices(load_outcomes(snakemake.params.outcomes, CORRECTNESS))
settings = AnalysisSettings(**snakemake.params.settings)
tables = variation.analyse(matrices, settings)
for key, frame in tables.items():
    write_csv(variation.on_reader_scale(frame), snakemake.output[key])
variation_plots.variation_figure(matrices, tables["spread"], snakemake.output.figure)
with atomic_open(snakemake.output.fragment) as handle:
    handle.write(variation_fragment.render(tables, snakemake.output.figure,
                                           {key: snakemake.output[key] for key in tables}, settings.alpha))
logging.info("%d variant sets x (model, language) studied", len(matrices))
