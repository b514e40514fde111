"""One self-contained HTML page: every analysis table and figure, readable in a browser with no server.

Figures are embedded as ``data:image/png;base64`` URIs and the style sheet is
inline, so ``results/report.html`` can be mailed or opened from disk as it is.
Long tables show their first rows and name the CSV file holding all of them.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

import pandas as pd

from ..jsonl import atomic_open
from ..names import read_results_csv

MAX_ROWS = 200
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { margin-bottom: 0.2rem; } h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2rem; margin-top: 2.5rem; }
h3 { margin-top: 1.6rem; }
nav a { margin-right: 1rem; }
.meta { color: #555; font-size: 0.92rem; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.5rem 0.8rem; margin: 0.8rem 0; }
.scroll { overflow-x: auto; max-height: 34rem; overflow-y: auto; border: 1px solid #eee; margin: 0.5rem 0; }
table.data { border-collapse: collapse; font-size: 0.82rem; }
table.data th, table.data td { border: 1px solid #ddd; padding: 0.2rem 0.45rem; text-align: left; vertical-align: top;
                               white-space: nowrap; }
table.data span.long { display: block; white-space: normal; min-width: 22rem; max-width: 40rem; }
table.data thead th { background: #f3f4f6; position: sticky; top: 0; }
table.data tbody tr:nth-child(even) { background: #fafafa; }
figure { margin: 1rem 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.88rem; }
ul.findings li { margin: 0.2rem 0; }
"""


def data_uri(path: str | Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def _cell(value: Any) -> str:
    """One escaped table cell; long text wraps in a block of its own so short columns stay on one line."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    text = html.escape(str(value))
    return f'<span class="long">{text}</span>' if len(text) > 48 else text


def table_html(frame: pd.DataFrame, table_id: str, csv_name: str | None = None, max_rows: int = MAX_ROWS,
               drop: tuple[str, ...] = ()) -> str:
    if frame.empty:
        return f'<p class="note" id="{table_id}-empty">No rows.</p>'
    shown = frame.drop(columns=[c for c in drop if c in frame.columns]).head(max_rows)
    shown = shown.astype(object).map(_cell)
    body = shown.to_html(index=False, table_id=table_id, classes="data", border=0, escape=False)
    more = ""
    if len(frame) > max_rows:
        where = f" (all of them in <code>{html.escape(csv_name)}</code>)" if csv_name else ""
        more = f'<p class="meta">First {max_rows} of {len(frame)} rows{where}.</p>'
    return f'<div class="scroll">{body}</div>{more}'


def families_html(frame: pd.DataFrame) -> str:
    """The correction families of a significance table: how many tests each holds, how many are significant."""
    if frame.empty:
        return ""
    summary = frame.groupby("correction", sort=True).agg(tests=("p_value", "size"),
                                                          significant=("significant", "sum")).reset_index()
    items = "".join(f"<li>{html.escape(row.correction)}: {int(row.significant)} significant</li>"
                    for row in summary.itertuples(index=False))
    return f'<ul class="families">{items}</ul>'


def figure_html(path: str | Path, caption: str) -> str:
    return (f'<figure><img src="{data_uri(path)}" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'


def _read(path: str | Path | None) -> pd.DataFrame:
    if path is None or not Path(path).exists():
        return pd.DataFrame()
    return read_results_csv(path)


def findings(tables: dict[str, pd.DataFrame], settings: dict[str, Any]) -> list[str]:
    """A few one-line facts a reader should see first."""
    out = []
    lb = tables["leaderboard"]
    if not lb.empty:
        out.append(f"{lb['model'].nunique()} model(s), {lb['task'].nunique()} task(s), "
                   f"{lb['language'].nunique()} language(s), {lb['template'].nunique()} template(s); "
                   f"{len(lb)} leaderboard rows, each with a {settings.get('confidence', 0.95):.0%} bootstrap interval.")
    sens = tables["sensitivity"]
    if not sens.empty:
        sens = sens[sens["metric"] == "acc"] if "acc" in set(sens["metric"]) else sens
        row = sens.sort_values("spread", ascending=False).iloc[0]
        out.append(f"Largest template spread: {row['spread']:.3f} ({row['metric']}, {row['model']}, {row['task']}, "
                   f"{row['language']}: {row['worst_template']} {row['min']:.3f} vs {row['best_template']} {row['max']:.3f}).")
    for key, label in (("significance_templates", "template-vs-template"), ("significance_models", "model-vs-model")):
        sig = tables[key]
        if not sig.empty:
            out.append(f"{label}: {int(sig['significant'].sum())} of {len(sig)} paired tests significant at "
                       f"alpha={settings.get('alpha', 0.05)} after Holm-Bonferroni correction.")
    rates = tables["parse_failures"]
    if not rates.empty and rates["n"].sum():
        out.append(f"Parse failures: {int(rates['parse_failures'].sum())} of {int(rates['n'].sum())} responses "
                   f"({rates['parse_failures'].sum() / rates['n'].sum():.1%}) across all combinations.")
    return out


def render(tables: dict[str, pd.DataFrame], figures: dict[str, list[tuple[str, str]]], settings: dict[str, Any],
           csv_names: dict[str, str] | None = None) -> str:
    """The page as a string. ``figures``: section -> [(png path, caption)]."""
    csv_names = csv_names or {}
    lb = tables["leaderboard"]
    models = sorted(lb["model"].unique()) if not lb.empty else []
    confidence = settings.get("confidence", 0.95)
    alpha = settings.get("alpha", 0.05)
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>babeleval report</title>", f"<style>{STYLE}</style></head><body>",
        "<h1>babeleval report</h1>",
        f'<p class="meta">Computed from the raw per-item outputs. Bootstrap: {settings.get("samples", 1000)} resamples, '
        f'seed {settings.get("seed")}, {confidence:.0%} percentile intervals. Significance: exact McNemar (right/wrong '
        f'metrics) or paired bootstrap (corpus and graded metrics) on the items both sides answered, '
        f'Holm-Bonferroni correction per (comparison, task, metric), alpha = {alpha}.</p>',
        '<nav><a href="#leaderboard">Leaderboard</a><a href="#heatmaps">Heatmaps</a>'
        '<a href="#sensitivity">Template sensitivity</a><a href="#significance">Significance</a>'
        '<a href="#parse-failures">Parse failures</a><a href="#difficulty">Item difficulty</a></nav>',
        '<h2 id="findings">At a glance</h2><ul class="findings">',
        *[f"<li>{html.escape(line)}</li>" for line in findings(tables, settings)], "</ul>",

        '<h2 id="leaderboard">Leaderboard</h2>',
        f'<p>One row per (model, task, language, template, metric); <code>ci_low</code>/<code>ci_high</code> '
        f'bound the {confidence:.0%} bootstrap interval over items.</p>',
        table_html(lb, "leaderboard-table", csv_names.get("leaderboard")),

        '<h2 id="heatmaps">Model x language</h2>',
        *[figure_html(p, c) for p, c in figures.get("heatmaps", [])],

        '<h2 id="sensitivity">Template sensitivity</h2>',
        "<p>Per (model, task, language, metric): the score across templates. <em>spread</em> = max - min.</p>",
        *[figure_html(p, c) for p, c in figures.get("spread", [])],
        table_html(tables["sensitivity"], "sensitivity-table", csv_names.get("sensitivity")),
        "<h3>Ranking stability across templates</h3>",
        "<p>Rank correlation (Kendall's tau-b, Spearman's rho) between two templates of the models' scores "
        "(<em>ranked = models</em>) and, per model, of the languages' scores (<em>ranked = languages</em>). "
        "1 = same order under both templates.</p>",
    ]
    if len(models) < 2:
        parts.append(note(f"Ranking models needs two models; this grid has {len(models)} "
                          f"({', '.join(models)}). Language rankings per model are shown instead."))
    parts += [
        table_html(tables["rank_stability"], "rank-stability-table", csv_names.get("rank_stability")),

        '<h2 id="significance">Paired significance</h2>',
        f"<p>Each row tests a against b on the items both answered, with <em>fixed</em> held constant (the model "
        f"when templates are compared, the template when models are). <em>a_only</em>/<em>b_only</em>: items only a / "
        f"only b got right (McNemar's discordant pairs). <em>p_holm</em>: Holm-Bonferroni adjusted p-value within its "
        f"family, all tests of one comparison kind, task and metric (listed above each table; the CSV files name it in "
        f"a <em>correction</em> column); <em>significant</em>: p_holm &lt; {alpha}.</p>",
        "<h3>Template vs template</h3>",
        families_html(tables["significance_templates"]),
        table_html(tables["significance_templates"], "significance-templates-table",
                   csv_names.get("significance_templates"), drop=("comparison", "correction")),
        "<h3>Model vs model</h3>",
    ]
    if len(models) < 2:
        parts.append(note(f"Model-vs-model tests need two models; this grid has {len(models)} ({', '.join(models)})."))
    else:
        parts.append(families_html(tables["significance_models"]))
        parts.append(table_html(tables["significance_models"], "significance-models-table",
                                csv_names.get("significance_models"), drop=("comparison", "correction")))
    parts += [
        '<h2 id="parse-failures">Parse failures</h2>',
        "<p>Responses the template's parser could not read; they count as not correct in accuracy.</p>",
        *[figure_html(p, c) for p, c in figures.get("parse_failures", [])],
        table_html(tables["parse_failures"], "parse-failures-table", csv_names.get("parse_failures")),
        "<h3>Most common reasons, with an example each</h3>",
        table_html(tables["parse_failure_reasons"], "parse-failure-reasons-table",
                   csv_names.get("parse_failure_reasons")),

        '<h2 id="difficulty">Item difficulty across models</h2>',
        "<p>Per (task, language, template): items counted by how many models answered them right, from every "
        "model to no model (seed 001's analysis), with examples.</p>",
    ]
    if len(models) < 2:
        parts.append(note(f"With one model the buckets are only 'every model' and 'no model'; add models to "
                          f"params.yaml to separate easy from hard items."))
    parts += [
        table_html(tables["difficulty_buckets"], "difficulty-buckets-table", csv_names.get("difficulty_buckets")),
        "<h3>Which models, exactly</h3>",
        table_html(tables["difficulty_patterns"], "difficulty-patterns-table", csv_names.get("difficulty_patterns")),
        f"<h3>Solved in {html.escape(str(settings.get('pivot_language', 'eng_Latn')))}, failed in another language</h3>",
        "<p>On items that are the same across languages (same id), per model and template: <em>pivot_only</em> items "
        "were answered right in the pivot language and wrong in <em>language</em>; <em>language_only</em> the "
        "reverse; <em>p_value</em>: exact McNemar on those pairs (uncorrected).</p>",
        table_html(tables["crosslingual_gaps"], "crosslingual-gaps-table", csv_names.get("crosslingual_gaps")),
        table_html(tables["crosslingual_items"], "crosslingual-items-table", csv_names.get("crosslingual_items")),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_report(out: str | Path, csvs: dict[str, str | Path], figures: dict[str, list[tuple[str, str]]],
                 settings: dict[str, Any]) -> str:
    """Read the analysis CSVs named in ``csvs`` (keys as in ``render``) and write the page to ``out``."""
    keys = ["leaderboard", "sensitivity", "rank_stability", "significance_templates", "significance_models",
            "parse_failures", "parse_failure_reasons", "difficulty_buckets", "difficulty_patterns",
            "crosslingual_gaps", "crosslingual_items"]
    tables = {key: _read(csvs.get(key)) for key in keys}
    page = render(tables, figures, settings, {k: str(v) for k, v in csvs.items()})
    with atomic_open(out) as handle:
        handle.write(page)
    return str(out)
