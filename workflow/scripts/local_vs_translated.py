import logging
from pathlib import Path

import pandas as pd

from babeleval.analysis import local_vs_translated as lvt
from babeleval.analysis.settings import AnalysisSettings
from babeleval.core import joblog
from babeleval.core.paths import combo_from_path
from babeleval.score import outcomes

joblog.setup(snakemake.log[0])
settings = AnalysisSettings(**snakemake.params.settings)
tables = {combo_from_path(path): pd.DataFrame(outcomes.read(path, columns=["correct", "n_choices"]))
          for path in snakemake.input.outcomes}
formats = {(task, template): lvt.Format(**fmt)
           for task, templates in snakemake.params.formats.items() for template, fmt in templates.items()}
table = lvt.compare(settings.local_vs_translated, tables, formats, settings)
table.to_csv(snakemake.output.table, index=False)
reason = lvt.empty_reason(settings.local_vs_translated, sorted({combo.model for combo in tables}))
Path(snakemake.output.fragment).write_text(lvt.section(table, snakemake.output.table, reason), encoding="utf-8")
logging.info("%d rows", len(table))
