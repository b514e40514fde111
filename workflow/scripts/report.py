import logging
from pathlib import Path

from babeleval.core import joblog
from babeleval.analysis import report
from babeleval.analysis.settings import AnalysisSettings

joblog.setup(snakemake.log[0])
csvs = {name: snakemake.input[name] for name in report.TABLE_KEYS}
figures = {}
for path in snakemake.input.plots:
    figures.setdefault(Path(path).parent.name, {})[Path(path).stem] = path
# the prompt-variation section (rule variation_analysis), where the grid has variants of a base template
report.write_report(snakemake.output[0], csvs, figures, AnalysisSettings(**snakemake.params.settings),
                    tuple(snakemake.input.variation), snakemake.input.omitted, tuple(p for p in snakemake.params.usage if Path(p).exists()),
                    dict(snakemake.params.prices))
logging.info("wrote %s", snakemake.output[0])
