"""One self-contained HTML page: every analysis table and figure, readable in a browser with no server.

The page is the Jinja template ``report.html.j2`` beside this module. Figures are embedded as
``data:image/png;base64`` URIs and the style sheet is inline, so ``results/report.html`` loads nothing from
the network and can be mailed or opened from disk as it is. Long tables show their first rows and name
the CSV file holding all of them.
"""

from __future__ import annotations

import base64
import html
import struct
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from ..core.jsonl import atomic_open
from ..core.paths import PLAN_OMITTED
from ..score.metrics import ACCURACY, get_metric
from . import findings, first_screen, paper_tables, planning_section
from .leaderboard import for_readers, omitted_table, read_leaderboard
from .records import SIGNIFICANCE_SCORES, off_reader_scale, read_table
from .settings import AnalysisSettings

MAX_ROWS = 200
TEMPLATE = "report.html.j2"
TABLE_KEYS = ["leaderboard", "sensitivity", "rank_stability", "significance_templates", "significance_models",
              "parse_failures", "parse_failure_reasons", "reasoning", "extractor_agreement", "difficulty_buckets",
              "difficulty_patterns", "crosslingual_gaps", "crosslingual_items"]
# figure kind -> caption; a task lacking a kind gets the reason instead
CAPTIONS = {
    "heatmap": "{task}: headline metric, models x languages, one panel per template",
    "template_spread": "{task}: headline metric under each template with its interval; band = range across "
                       "templates",
    "parse_failures": "{task}: parse-failure rate (%) per model / template and language",
}
# what marks the chance level in a figure, said in its caption where the task has a chance level (plots.py draws it
# only there)
CHANCE_MARKS = {"heatmap": " (red mark on the colour bar: chance)", "template_spread": "; dashed line = chance"}
# per table: the line shown in its place when it has no rows (a table with no rows has no box)
EMPTY = {
    "sensitivity": "No task has two templates: no template sensitivity to measure.",
    "rank_stability": "No task has two templates: no ranking to compare across templates.",
    "significance_templates": "No task has two templates: no template-vs-template test.",
    "parse_failures": "Every template is scored by log-likelihood: nothing to parse.",
    "parse_failure_reasons": "No parse failure.",
    "difficulty_buckets": "No item was answered by a model.",
    "difficulty_patterns": "No item was answered by a model.",
    "crosslingual_gaps": "No item appears in the pivot language and another language under the same id.",
    "crosslingual_items": "No item was solved in the pivot language and failed in another language.",
}
MISSING = {
    "template_spread": "{task}: one template in the grid, so there is no template spread to draw.",
    "parse_failures": "{task}: every template is scored by log-likelihood, so there is nothing to parse.",
}


# A figure drawn wide (many languages) is shown at no less than this share of its drawn size and scrolls sideways
# in its own box, as a wide table does, rather than being shrunk to the column until its labels cannot be read.
MIN_FIGURE_SCALE = 0.6


def figure_html(path: str | Path, caption: str) -> Markup:
    """A PNG embedded as a ``data:`` URI with its caption; the PNG header gives the width it was drawn at."""
    data = Path(path).read_bytes()
    drawn_width = struct.unpack(">I", data[16:20])[0]
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return Markup(f'<figure><div class="figure-scroll"><img src="{src}" alt="{html.escape(caption)}" '
                  f'style="min-width: {round(drawn_width * MIN_FIGURE_SCALE)}px"></div>'
                  f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _cell(value: Any) -> str:
    """One escaped table cell; long text wraps in a block of its own so short columns stay on one line."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"  # p-values keep their small digits, percentages their decimal
    text = html.escape(str(value))
    return f'<span class="long">{text}</span>' if len(text) > 48 else text


def table_html(frame: pd.DataFrame, table_id: str, csv_name: str | None = None, max_rows: int = MAX_ROWS,
               drop: tuple[str, ...] = (), classes: str = "data", empty: str = "") -> Markup:
    """A table in its scrolling box; an empty one has no box: ``empty`` says why in a line, or nothing is shown."""
    if frame.empty:
        return Markup(f'<p class="meta" id="{table_id}-empty">{html.escape(empty)}</p>') if empty else Markup("")
    shown = frame.drop(columns=[c for c in drop if c in frame.columns]).head(max_rows)
    shown = shown.astype(object).map(_cell)
    body = shown.to_html(index=False, table_id=table_id, classes=classes, border=0, escape=False)
    more = ""
    if len(frame) > max_rows:
        where = f" (all of them in <code>{html.escape(csv_name)}</code>)" if csv_name else ""
        more = f'<p class="meta">First {max_rows} of {len(frame)} rows{where}.</p>'
    return Markup(f'<div class="scroll">{body}</div>{more}')


def corrections_html(frame: pd.DataFrame) -> Markup:
    """The correction groups of a significance table: how many tests each holds, how many are significant."""
    if frame.empty:
        return Markup("")
    summary = frame.groupby("correction", sort=True).agg(tests=("p_value", "size"),
                                                          significant=("significant", "sum")).reset_index()
    items = "".join(f"<li>{html.escape(row.correction)}: {int(row.significant)} significant</li>"
                    for row in summary.itertuples(index=False))
    return Markup(f'<ul class="corrections">{items}</ul>')


# per table: the score columns shown on a metric's display scale, and the metric (None: the row's ``metric`` column)
SCALED = {"significance_templates": (SIGNIFICANCE_SCORES, None),
          "significance_models": (SIGNIFICANCE_SCORES, None),
          "crosslingual_gaps": (("pivot_acc", "language_acc"), ACCURACY)}
# per table: columns holding a share of items, shown in percent
SHARES = {"difficulty_buckets": ("share",), "difficulty_patterns": ("share",),
          "parse_failure_reasons": ("share_of_failures",)}


def on_display_scale(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """A table's score columns on each metric's display scale (as every other table of the page), the unit named:
    in the header where one metric fills the column, in a ``scale`` column where the row's metric decides."""
    if frame.empty:
        return frame
    frame = frame.copy()
    columns, metric = SCALED.get(key, ((), None))
    renamed = {column: f"{column}, %" for column in SHARES.get(key, ()) if column in frame.columns}
    for column in renamed:
        frame[column] = frame[column].astype(float) * 100.0
    if metric is not None:
        defined = get_metric(metric)
        for column in columns:
            if column in frame.columns:
                frame[column] = [defined.shown(v) for v in frame[column].astype(float)]
                renamed[column] = f"{column}, {'%' if defined.percent else '0-100'}"
    elif columns and "metric" in frame.columns:
        defined = [get_metric(name) for name in frame["metric"]]
        for column in columns:
            if column in frame.columns:
                frame[column] = [m.shown(v) for m, v in zip(defined, frame[column].astype(float))]
        frame.insert(frame.columns.get_loc("metric") + 1, "scale", [m.unit for m in defined])
    return frame.rename(columns=renamed)


def _read(path: str | Path | None, key: str = "") -> pd.DataFrame:
    """A table back on the scale the package computes on (the leaderboard and the paired tests are written on the
    scale readers see)."""
    if path is None or not Path(path).exists():
        return pd.DataFrame()
    if key == "leaderboard":
        return read_leaderboard(path)
    frame = read_table(path)
    return off_reader_scale(frame, SIGNIFICANCE_SCORES) if key.startswith("significance") else frame


def overview(tables: dict[str, pd.DataFrame], settings: AnalysisSettings) -> list[str]:
    """The grid, the share of significant tests and the parse-failure total."""
    out = []
    lb = tables["leaderboard"]
    if not lb.empty:
        out.append(f"{lb['model'].nunique()} model(s), {lb['task'].nunique()} task(s), "
                   f"{lb['language'].nunique()} language(s), {lb['template'].nunique()} template(s); every score "
                   f"with a {settings.confidence:.0%} interval (the method line above names each metric's).")
    for key, name in (("significance_templates", "template-vs-template"), ("significance_models", "model-vs-model")):
        sig = tables[key]
        if not sig.empty:
            out.append(f"{name}: {int(sig['significant'].astype(bool).sum())} of {len(sig)} paired tests significant "
                       f"at alpha={settings.alpha} after Holm-Bonferroni correction.")
    out += findings.not_measured(lb) if not lb.empty else []
    rates = tables["parse_failures"]
    if not rates.empty and "generated" in rates.columns:
        rates = rates[rates["generated"].astype(str).str.lower() == "true"]  # log-likelihood scoring reads no text
    if not rates.empty and rates["n"].sum():
        out.append(f"Parse failures: {int(rates['parse_failures'].sum())} of {int(rates['n'].sum())} generated "
                   f"answers ({rates['parse_failures'].sum() / rates['n'].sum():.1%}); accuracy is reported over all "
                   "items and over parsed items.")
    return out


def paper_blocks(lb: pd.DataFrame) -> list[dict[str, Any]]:
    """The leaderboard's model x language tables (babeleval.analysis.paper_tables) as HTML: one per template of the
    task's headline metric, accuracy over parsed items inside its cells (each table once), and the mean and best."""
    blocks = []
    if lb.empty:
        return blocks
    for task in sorted(lb["task"].unique()):
        task_frame = lb[lb["task"] == task]
        metrics = paper_tables.headline_metrics(task_frame)[:1]
        languages = paper_tables.language_order(task_frame[task_frame["metric"] == metrics[0]]) if metrics else []
        for metric in metrics:
            metric_frame = task_frame[task_frame["metric"] == metric]
            templates = sorted(metric_frame["template"].unique())
            chance = paper_tables.chance_of(metric_frame)
            tables = [(f"template {t}", paper_tables.fewer_items_note(task_frame, t),
                       table_html(paper_tables.template_table(task_frame, metric, t, languages, with_parsed=True),
                                  f"paper-{task}-{metric}-{t}", classes="data paper"))
                      for t in templates]
            best = paper_tables.best_mean_table(task_frame, metric, languages)
            if len(templates) > 1 and (best[languages] != "").any().any():
                tables.append(("mean and best over templates", paper_tables.BEST_WARNING,
                               table_html(best, f"paper-{task}-{metric}-best", classes="data paper")))
            blocks.append({"task": task, "label": get_metric(metric).label, "tables": tables,
                           "chance": f"Chance level: {chance * 100:.1f}." if chance is not None
                           else "No chance level for this metric."})
    return blocks


def figure_items(figures: dict[str, dict[str, str]], tasks: list[str], with_chance: frozenset[str] = frozenset()
                 ) -> dict[str, list[dict[str, Any]]]:
    """task -> its figures in a fixed order, with the reason in place of each figure a task cannot have; the chance
    mark is named in the captions of the tasks ``with_chance`` only."""
    out = {}
    for task in tasks:
        drawn = figures.get(task, {})
        items = []
        for kind in ("heatmap", "template_spread", "parse_failures"):
            if kind in drawn:
                caption = CAPTIONS[kind].format(task=task) + (CHANCE_MARKS.get(kind, "") if task in with_chance else "")
                items.append({"figure": figure_html(drawn[kind], caption)})
            elif kind in MISSING:
                items.append({"figure": None, "caption": MISSING[kind].format(task=task)})
        out[task] = items
    return out


def tasks_with_chance(lb: pd.DataFrame) -> frozenset[str]:
    """The tasks whose headline metric has a chance level (the figures mark it)."""
    if lb.empty or "chance" not in lb.columns:
        return frozenset()
    return frozenset(str(t) for t in lb.loc[lb["chance"].notna(), "task"].unique())


def render(tables: dict[str, pd.DataFrame], figures: dict[str, dict[str, str]], settings: AnalysisSettings,
           csv_names: dict[str, str] | None = None, sections: tuple[str, ...] = (),
           omitted: pd.DataFrame | None = None, usage_files: tuple[str | Path, ...] = (),
           prices: dict[str, dict[str, float] | None] | None = None) -> str:
    """The page as a string. ``figures``: task -> {kind: png path} (kinds as in CAPTIONS); ``sections``: HTML
    sections other analysis rules wrote (the prompt-variation section), added at the end as they are;
    ``omitted``: what the grid left out and why (``leaderboard.omitted_table``)."""
    csv_names = csv_names or {}
    omitted = omitted_table(None) if omitted is None else omitted
    tables = {key: tables.get(key, pd.DataFrame()) for key in TABLE_KEYS}
    lb = tables["leaderboard"]
    models = sorted(lb["model"].unique()) if not lb.empty else []
    tasks = sorted(lb["task"].unique()) if not lb.empty else []
    alpha = settings.alpha

    def table(key: str, drop: tuple[str, ...] = ()) -> Markup:
        shown = for_readers(lb) if key == "leaderboard" and not lb.empty else on_display_scale(tables[key], key)
        return table_html(shown, key.replace("_", "-") + "-table", csv_names.get(key), drop=drop,
                          empty=EMPTY.get(key, ""))

    env = Environment(loader=FileSystemLoader(Path(__file__).parent), autoescape=True, undefined=StrictUndefined,
                      keep_trailing_newline=True)
    sig_drop = ("comparison", "correction")
    page = env.get_template(TEMPLATE).render(
        samples=settings.samples, seed=settings.seed, confidence_pct=f"{settings.confidence:.0%}", alpha=alpha,
        pivot=settings.pivot_language, models=models,
        overview=overview(tables, settings),
        task_findings=findings.per_task(lb, tables["significance_templates"], tables["significance_models"], alpha)
        if not lb.empty else {},
        method_line=paper_tables.legend(settings.confidence, lb["metric"].unique() if not lb.empty else []),
        overall_table=table_html(first_screen.table(lb, tables["significance_templates"], tables["significance_models"]),
                                 "overall-table", classes="first") if not lb.empty else Markup(""),
        overall_note=paper_tables.OVERALL_NOTE,
        left_out_of_headline=paper_tables.left_out_of_headline(lb) if not lb.empty else [],
        omitted_table=table_html(omitted, "omitted-table", classes="data"), omitted_count=len(omitted),
        planning=planning_section.section((tables["significance_templates"], tables["significance_models"]),
                                          usage_files, prices or {}, alpha, table_html),
        omitted_file=PLAN_OMITTED,
        paper_tables=paper_blocks(lb), truncated=paper_tables.truncation_lines(lb) if not lb.empty else [],
        long_table=table("leaderboard"), figures=figure_items(figures, tasks, tasks_with_chance(lb)),
        sensitivity_table=table("sensitivity"), rank_table=table("rank_stability"),
        corrections_templates=corrections_html(tables["significance_templates"]),
        significance_templates_table=table("significance_templates", sig_drop),
        corrections_models=corrections_html(tables["significance_models"]),
        significance_models_table=table("significance_models", sig_drop),
        parse_failures_table=table("parse_failures"), parse_failure_reasons_table=table("parse_failure_reasons"),
        reasoning_table=table("reasoning"),
        extractor_lines=extractor_lines(tables["extractor_agreement"]),
        extractor_agreement_table=table("extractor_agreement") if not tables["extractor_agreement"].empty
        else Markup(""),
        difficulty_buckets_table=table("difficulty_buckets"), difficulty_patterns_table=table("difficulty_patterns"),
        crosslingual_gaps_table=table("crosslingual_gaps"), crosslingual_items_table=table("crosslingual_items"),
        sections=[Markup(section) for section in sections],
    )
    return page


def extractor_lines(agreement: pd.DataFrame) -> list[str]:
    """One sentence per (model, task, template, extractor) of the extractor-agreement table, over its languages."""
    lines = []
    if agreement.empty:
        return lines
    for (model, task, template, extractor), rows in agreement.groupby(["model", "task", "template", "extractor"],
                                                                       sort=True):
        both, agree = int(rows["both_read"].sum()), int(rows["agree"].sum())
        failures, rescued = int(rows["rule_failures"].sum()), int(rows["from_extractor"].sum())
        agreed = (f"agreed with the rule parser on {agree} of the {both} replies both read ({100 * agree / both:.0f}%)"
                  if both else "read no reply the rule parser read as well")
        lines.append(f"{model}, {task} / {template}: extractor {extractor} {agreed}; of the {failures} "
                     f"repl{'y' if failures == 1 else 'ies'} the rules could not read, it answered {rescued}.")
    return lines


def write_report(out: str | Path, csvs: dict[str, str | Path], figures: dict[str, dict[str, str]],
                 settings: AnalysisSettings, section_files: tuple[str | Path, ...] = (),
                 omitted: str | Path | None = None, usage_files: tuple[str | Path, ...] = (),
                 prices: dict[str, dict[str, float] | None] | None = None) -> str:
    """Read the analysis CSVs named in ``csvs`` (keys as in TABLE_KEYS), the plan's ``omitted.tsv`` and the
    generation jobs' usage files (the planning section, with each model's ``prices``), and write the page to
    ``out``."""
    tables = {key: _read(csvs.get(key), key) for key in TABLE_KEYS}
    sections = tuple(Path(path).read_text(encoding="utf-8") for path in section_files)
    page = render(tables, figures, settings, {k: str(v) for k, v in csvs.items()}, sections, omitted_table(omitted),
                  usage_files, prices)
    with atomic_open(out) as handle:
        handle.write(page)
    return str(out)
