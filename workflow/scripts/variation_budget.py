import logging

from babeleval.analysis import budget_fragment, variation
from babeleval.analysis.budget_table import BudgetedSet, budget_table, outcome_columns
from babeleval.analysis.records import load_items, load_outcomes, write_csv
from babeleval.analysis.settings import AnalysisSettings
from babeleval.core import joblog
from babeleval.core.jsonl import atomic_open

joblog.setup(snakemake.log[0])
settings = AnalysisSettings(**snakemake.params.settings)
sets = [BudgetedSet.from_json(entry) for entry in snakemake.params.sets]
table = budget_table(sets, load_outcomes(snakemake.params.outcomes, outcome_columns(sets)),
                     load_items(snakemake.input.prepared), settings)
write_csv(table, snakemake.output.table)
sensitivity = variation.estimate_sensitivity_table(table, settings.permutations, settings.seed,
                                                   settings.language_groups)
write_csv(sensitivity, snakemake.output.sensitivity)
with atomic_open(snakemake.output.fragment) as handle:
    handle.write(budget_fragment.render(table, sensitivity, {"table": snakemake.output.table,
                                                             "sensitivity": snakemake.output.sensitivity}))
logging.info("%d budgeted (model, task, set) estimated", len(sets))
