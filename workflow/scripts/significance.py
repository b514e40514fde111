import logging

from babeleval.analysis import significance
from babeleval.analysis.records import (SIGNIFICANCE_SCORES, TEXT_ONLY, load_outcomes, load_scores, on_reader_scale,
                                       write_csv)
from babeleval.analysis.settings import AnalysisSettings
from babeleval.core import joblog

joblog.setup(snakemake.log[0])
settings = AnalysisSettings(**snakemake.params.settings)
# the columns metrics read (no response text), one group of combinations read at a time
raw = load_outcomes(snakemake.params.outcomes, without=TEXT_ONLY)
tables = significance.pairwise(raw, load_scores(snakemake.params.scores),
                               seed=settings.seed, n_samples=settings.samples, alpha=settings.alpha,
                               confidence=settings.confidence)
# on the scale readers see, as every results table: accuracy in percent, chrF in points, named in a scale column
write_csv(on_reader_scale(tables["templates"], SIGNIFICANCE_SCORES), snakemake.output.templates)
write_csv(on_reader_scale(tables["models"], SIGNIFICANCE_SCORES), snakemake.output.models)
logging.info("%d template-vs-template tests, %d model-vs-model tests", len(tables["templates"]), len(tables["models"]))
