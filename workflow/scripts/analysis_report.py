import logging
from pathlib import Path

from babeleval import joblog
from babeleval.analysis import report

joblog.setup(snakemake.log[0])
names = ["leaderboard", "sensitivity", "rank_stability", "significance_templates", "significance_models",
         "parse_failures", "parse_failure_reasons", "difficulty_buckets", "difficulty_patterns",
         "crosslingual_gaps", "crosslingual_items"]
csvs = {name: snakemake.input[name] for name in names}
captions = {"heatmap": ("heatmaps", "{task}: main metric, models x languages, one panel per template"),
            "template_spread": ("spread", "{task}: score under each template per language and model"),
            "parse_failures": ("parse_failures", "{task}: parse-failure rate per model / template and language")}
figures = {}
for path in snakemake.input.plots:
    section, caption = captions[Path(path).stem]
    figures.setdefault(section, []).append((path, caption.format(task=Path(path).parent.name)))
report.write_report(snakemake.output[0], csvs, figures, dict(snakemake.params.settings))
logging.info("wrote %s", snakemake.output[0])
