"""The variation section as an HTML fragment (``<section id="variation">``) for the report to include."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from .report import figure_html, table_html
from .variation import BASE


def note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'


def findings(tables: dict[str, pd.DataFrame]) -> list[str]:
    out = []
    spread = tables["spread"]
    if not spread.empty:
        row = spread.sort_values("spread", ascending=False).iloc[0]
        out.append(f"Largest spread over variants: {row['spread']:.3f} [{row['spread_low']:.3f}, {row['spread_high']:.3f}] "
                   f"({row['model']}, {row['task']}, {row['language']}, {row['n_variants']} variants of {row[BASE]}: "
                   f"{row['worst_variant']} {row['min']:.3f} vs {row['best_variant']} {row['max']:.3f}); item noise "
                   f"alone gives {row['spread_noise']:.3f} (permutation p = {row['p_spread']:.3f}).")
        beyond = int((spread["p_spread"] < 0.05).sum())
        out.append(f"{beyond} of {len(spread)} (model, task, language) rows have a spread beyond item noise "
                   "(p < 0.05, not corrected for multiple rows).")
    decomposition = tables["decomposition"]
    variant_terms = decomposition[~decomposition["term"].isin(["model", "language", "model x language",
                                                                "items (within cells)", "cells not explained"])]
    if not variant_terms.empty:
        row = variant_terms.sort_values("share", ascending=False).iloc[0]
        out.append(f"Largest variation term: '{row['term']}' explains {row['share']:.2%} of the variance of per-item "
                   f"correctness ({row['task']} / {row[BASE]}).")
    for row in tables["sensitivity"].itertuples(index=False):
        if row.rho == row.rho:
            against = "accuracy" if row.against == "score" else "resource group"
            out.append(f"{row.model}, {row.task} / {getattr(row, BASE)}: Spearman rho between a language's {against} and its "
                       f"sensitivity = {row.rho:.2f} over {row.n_languages} languages (permutation p = "
                       f"{row.p_two_sided:.3f} two-sided, {row.p_less:.3f} for rho < 0).")
    return out


def render(tables: dict[str, pd.DataFrame], figure: str | Path, csv_names: dict[str, str]) -> str:
    items = "".join(f"<li>{html.escape(line)}</li>" for line in findings(tables))
    parts = ['<section id="variation">', "<h2>Prompt variation</h2>",
             note("Variants of one base template differ only in format (enumerators, separators, spacing, label "
                  "case, instruction language, choice order, exemplars); every comparison uses the items all variants "
                  "share. Intervals: bootstrap over items, the same resample for every variant."),
             f'<ul class="findings">{items}</ul>' if items else "",
             figure_html(figure, "Accuracy of each variant by language and model; sensitivity against mean accuracy")]
    captions = {"spread": "Spread, standard deviation and IQR over variants",
                "axes": "Which axis moves the score, per language",
                "decomposition": "Variance decomposition of per-item correctness (sequential sums of squares)",
                "ranks": "Rank stability of models across variants",
                "sensitivity": "Is sensitivity larger in the languages a model knows least?"}
    for key, caption in captions.items():
        parts += [f"<h3>{html.escape(caption)}</h3>",
                  table_html(tables[key], f"variation-{key}", csv_names.get(key))]
    parts.append("</section>")
    return "\n".join(parts)
