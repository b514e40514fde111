"""Where every file of a run lives: the one table of path patterns, relative to the workflow directory.

The rules, the jobs, the analysis, the run summary and the command-line tools all read their paths
here; a pattern's wildcards are the grid's names (``{model}``, ``{task}``, ``{language}``,
``{template}``) and a few of the rules' own (``{base}``: a base template whose variants are answered
together; ``{builtin}``: a model the workflow builds; ``{gguf}``: a GGUF file it converts; ``{name}``: a figure).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

# data: the canonical items of a (task, language), and the rows exemplars are drawn from where the protocol
# has its own exemplar split (JGLUE: train)
PREPARED = "data/prepared/{task}/{language}.jsonl"
PREPARED_FEWSHOT = "data/prepared/{task}/fewshot/{language}.jsonl"

# one file per combination, (task, language, template) for prompts
PROMPTS = "results/prompts/{task}/{language}/{template}.jsonl"
GENERATIONS = "results/generations/{model}/{task}/{language}/{template}.jsonl"
RAW = "results/raw/{model}/{task}/{language}/{template}.jsonl"
SCORES = "results/scores/{model}/{task}/{language}/{template}.json"
# the per-item outcomes analysis reads (babeleval.score.outcomes: no prompts, the response cut), written with the
# scores file
OUTCOMES = "results/outcomes/{model}/{task}/{language}/{template}.parquet"
RAW_DIR = "results/raw"
OUTCOMES_DIR = "results/outcomes"
SCORES_DIR = "results/scores"

# what a generation job paid for, per (model, task, template); and per variant set answered in one pass
USAGE = "results/usage/{model}/{task}/{template}.json"
SHARED_PREFIX_USAGE = "results/usage/{model}/{task}/shared_prefix/{base}.json"

# an extractor model's replies about a combination's replies (babeleval.score.extraction), where its template names
# one; and what its job paid for, filed under the model whose replies it read (the file names the extractor)
EXTRACTIONS = "results/extractions/{model}/{task}/{language}/{template}.jsonl"
EXTRACTION_USAGE = "results/usage/{model}/{task}/extraction/{template}.json"
EXTRACTION_PROMPT = "prompts/extraction.yaml"

# kept between runs: each model's response cache, and the models the workflow builds
CACHE = "results/cache/{model}.sqlite"
# what an API model with a cap has spent over every run (babeleval.generate.spend); beside its cache, not an output
SPEND = "results/spend/{model}.json"
BUILT_MODEL = "results/models/{builtin}"
# a GGUF file's float copy, converted once (babeleval.generate.gguf); ``{gguf}``: the file's name without .gguf
CONVERTED_GGUF = "results/models/gguf/{gguf}"
TINY_MODEL_CORPUS = "data/samples/belebele"  # the builtin model's tokenizer is trained on these files

# the plan: every (model, task, language, template) the grid leaves out, and why (babeleval.grid.holes)
PLAN_OMITTED = "results/plan/omitted.tsv"

# aggregation and analysis
LEADERBOARD_CSV = "results/leaderboard.csv"
LEADERBOARD_MD = "results/leaderboard.md"
METRICS_JSON = "results/metrics.json"
# the same headline numbers under short names: DVC's metrics, what `dvc exp show` lays out (babeleval.grid.headline)
HEADLINE_JSON = "results/headline.json"
BY_TEMPLATE = "results/tables/by_template.csv"
BY_LANGUAGE = "results/tables/by_language.csv"
# each template's hash, by task: DVC's params of the evaluate stage, so `dvc exp show` shows an edited template
TEMPLATE_HASHES = "results/template_hashes.yaml"
ANALYSIS = "results/analysis/{name}.csv"
PLOT = "results/plots/{task}/{name}.png"
REPORT = "results/report.html"
VARIATION_TABLE = "results/tables/variation_{name}.csv"
# budgeted variant sets' estimates (babeleval.analysis.budget_table), and their cross-lingual sensitivity test
VARIATION_BUDGET = VARIATION_TABLE.format(name="budget")
VARIATION_BUDGET_SENSITIVITY = VARIATION_TABLE.format(name="budget_sensitivity")
VARIATION_FIGURE = "results/plots/variation.png"
VARIATION_SECTION = "results/analysis/variation.html"
BUDGET_SECTION = "results/analysis/variation_budget.html"
# translated against locally written tests (babeleval.analysis.local_vs_translated)
LOCAL_VS_TRANSLATED = "results/tables/local_vs_translated.csv"
LOCAL_VS_TRANSLATED_SECTION = "results/analysis/local_vs_translated.html"

# the page template that makes `dvc plots` work offline (python -m babeleval dvc-plots; the Makefile names it
# to DVC relative to .dvc/)
OFFLINE_PLOTS_PAGE = ".dvc/tmp/offline_plots.html"

# the budgeted variant search (python -m babeleval search)
SEARCH = "results/search/{model}/{task}/{language}/{base}.json"

# every job's log lies under here (see ``log``)
LOGS = "results/logs"


class Combo(NamedTuple):
    """The labels of one combination of the grid."""

    model: str
    task: str
    language: str
    template: str


def combination_files(pattern: str, combos) -> list[str]:
    """``pattern`` filled in for every combination of ``combos`` ((model, task, language, template) each)."""
    return [pattern.format(model=m, task=t, language=lang, template=tpl) for m, t, lang, tpl in combos]


def combo_from_path(path: str | Path) -> Combo:
    """The labels of ``.../{model}/{task}/{language}/{template}.jsonl`` (a raw, scores or outcomes file)."""
    path = Path(path)
    parts = path.parts
    if len(parts) < 4:
        raise ValueError(f"{path}: expected .../<model>/<task>/<language>/<template>{path.suffix}")
    return Combo(parts[-4], parts[-3], parts[-2], path.stem)


def log(*parts: str) -> str:
    """A job's log file: ``log("score", "{model}", "{task}")`` is ``results/logs/score/{model}/{task}.log``."""
    return "/".join([LOGS, *parts]) + ".log"
