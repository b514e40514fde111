"""The variation section as an HTML fragment (``<section id="variation">``) for the report to include.

Accuracy and its spreads are shown in percent, as everywhere in the report and in the variation CSVs
(``variation.on_reader_scale``). The headline leads with what item noise alone would give, since the largest spread over
many rows is a maximum and an observed spread is biased upward; the best variant is named with the number of
variants it was picked from and a warning that a maximum over noisy scores is optimistic.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from .report import figure_html, table_html
from .variation import BASE, on_reader_scale


def note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'


BEST_OF_VARIANTS = ("best_variant and max are a maximum over n_variants noisy scores: biased upward, and no interval "
                    "here allows for picking it. Compare the spread with spread_noise (what item noise alone gives).")


def pct(value: float) -> str:
    return f"{100.0 * value:.1f}"


def findings(tables: dict[str, pd.DataFrame], alpha: float) -> list[str]:
    """The section's sentences; ``alpha``: the analysis's configured significance level (``AnalysisSettings``)."""
    out = []
    spread = tables["spread"]
    if not spread.empty:
        beyond = int((spread["p_spread"] < alpha).sum())
        out.append(f"Item noise alone would give a spread over variants of {pct(spread['spread_noise'].min())} to "
                   f"{pct(spread['spread_noise'].max())} points (the items shuffled over the variants); {beyond} of "
                   f"{len(spread)} (model, task, language) rows spread beyond it (permutation p < {alpha:g}, not "
                   "corrected for multiple rows).")
        row = spread.sort_values("spread", ascending=False).iloc[0]
        out.append(f"Largest observed spread: {pct(row['spread'])} points [{pct(row['spread_low'])}, "
                   f"{pct(row['spread_high'])}] against {pct(row['spread_noise'])} from item noise (p = "
                   f"{row['p_spread']:.3f}; {row['model']}, {row['task']}, {row['language']}, {row['n_items']} items): "
                   f"worst {row['worst_variant']} {pct(row['min'])}%, best of {row['n_variants']} variants of "
                   f"{row[BASE]} {row['best_variant']} {pct(row['max'])}% (a maximum over {row['n_variants']} noisy "
                   "scores, biased upward; the largest of the rows' spreads is biased upward too).")
    decomposition = tables["decomposition"]
    variant_terms = decomposition[~decomposition["term"].isin(["model", "language", "model x language",
                                                                "items (within cells)", "cells not explained"])]
    if not variant_terms.empty:
        row = variant_terms.sort_values("share", ascending=False).iloc[0]
        out.append(f"Largest variation term: '{row['term']}' explains {row['share']:.1%} of the variance of per-item "
                   f"correctness ({row['task']} / {row[BASE]}).")
    for row in tables["sensitivity"].itertuples(index=False):
        if row.rho == row.rho:
            against = "accuracy" if row.against == "score" else "resource group"
            out.append(f"{row.model}, {row.task} / {getattr(row, BASE)}: Spearman rho between a language's {against} and its "
                       f"sensitivity = {row.rho:.2f} over {row.n_languages} languages (permutation p = "
                       f"{row.p_two_sided:.3f} two-sided, {row.p_less:.3f} for rho < 0).")
    return out


# what an empty table of this section says instead (report.table_html shows no box for it)
EMPTY = "No rows: the grid has no variant set here, or too few variants, models or languages for this table."


def render(tables: dict[str, pd.DataFrame], figure: str | Path, csv_names: dict[str, str], alpha: float) -> str:
    items = "".join(f"<li>{html.escape(line)}</li>" for line in findings(tables, alpha))
    parts = ['<section id="variation">', "<h2>Prompt variation</h2>",
             note("Variants of one base template differ only in format (enumerators, separators, spacing, label "
                  "case, instruction language, choice order, exemplars); every comparison uses the items all variants "
                  "share. Intervals: bootstrap over items, the same resample for every variant."),
             f'<ul class="findings">{items}</ul>' if items else "",
             figure_html(figure, "Accuracy (%) of each variant by language and model; sensitivity against mean accuracy")]
    captions = {"spread": "Spread, standard deviation and IQR over variants",
                "axes": "Which axis moves the score, per language",
                "decomposition": "Variance decomposition of per-item correctness (sequential sums of squares)",
                "ranks": "Rank stability of models across variants",
                "sensitivity": "Is sensitivity larger in the languages a model knows least?"}
    for key, caption in captions.items():
        parts.append(f"<h3>{html.escape(caption)}</h3>")
        if key == "ranks" and not tables[key].empty and (tables[key]["n_models"] < 2).all():
            parts.append(note("Rank stability of models needs two models; this grid has one "
                              f"({csv_names.get(key, 'the ranks table')} lists the rows)."))
            continue
        parts += [note(BEST_OF_VARIANTS) if key == "spread" else "",
                  table_html(on_reader_scale(tables[key]), f"variation-{key}", csv_names.get(key), empty=EMPTY)]
    parts.append("</section>")
    return "\n".join(parts)
