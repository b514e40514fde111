"""How sensitive is a model to the prompt's format, from a fraction of a variant set's cells?

    python -m babeleval estimate --model tiny-llama --task belebele --base formatspread --parallel
    python -m babeleval estimate --model tiny-llama --task belebele --base formatspread --parallel \\
        --validate --fraction 0.1

Reads the per-item outcomes (``results/outcomes/<model>/<task>/<language>/<template>.parquet``) of every variant of
the base template and the task's prepared items (``data/prepared/<task>/<language>.jsonl``: the items each
variant would answer in a full run), fits the budgeted estimator (babeleval.analysis.budget_estimate) and prints
per language the mean over variants, the 5..95% quantiles, the best, the worst and the spread, each with its
interval and the cells it used.

``--validate``: every variant answered every item; the estimate is made from a designed ``--fraction`` (or
``--cells``) of them and printed beside the exhaustive values, so the estimator's error on this model shows.
``--parallel``: the task's items are the same in every language (Belebele), so languages share item effects.
``--metric``: the right/wrong metric whose per-item outcome is modelled (``acc``, ``acc_norm``); by default the
headline metric the variants' scores files record, as the workflow's own estimate models it.
``--variant-variance``: how the variance of the variants' effects is estimated (``resampled``, the default; ``moments``;
``laplace``: docs/variations.md, section 6).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from ..prompts.budget_design import Budget, choose_study
from ..analysis.budget_estimate import VARIANT_VARIANCES, Study, estimate, exhaustive
from ..analysis.budget_table import outcome_column, outcomes_of
from ..analysis.records import headline_of, load_outcomes, load_scores
from ..core import paths
from ..core.errors import BabelevalError, DataError
from ..core.jsonl import read_jsonl
from ..prompts.variants import base_name


def variant_outcomes(root: Path, model: str, task: str, base: str, metric: str) -> pd.DataFrame:
    """language, variant, item, correct: every per-item outcome under ``metric`` of the base template's variants."""
    folder = root / paths.OUTCOMES_DIR / model / task
    files = [path for path in sorted(folder.glob("*/*.parquet")) if base_name(path.stem) == base]
    if not files:
        raise DataError(f"no per-item outputs of {base} or its variants under {folder}/ (run the workflow first)")
    return outcomes_of(load_outcomes(files, ("id", outcome_column(metric))), metric)


def recorded_headline(root: Path, model: str, task: str, base: str) -> str:
    """The headline metric the base template's variants reported (their scores files' resolved records); none, or
    more than one, is a DataError asking for ``--metric``."""
    folder = root / paths.SCORES_DIR / model / task
    files = [path for path in sorted(folder.glob("*/*.json")) if base_name(path.stem) == base]
    if not files:
        raise DataError(f"no scores files of {base} or its variants under {folder}/ (run the workflow first)")
    headlines = {headline_of(summary) for summary in load_scores(files).values()}
    if len(headlines) != 1 or None in headlines:
        found = "no headline metric" if None in headlines else f"headlines {sorted(headlines)}"
        raise DataError(f"the scores files of {base} and its variants under {folder}/ record {found}: name the "
                        "metric the estimate models with --metric (acc, acc_norm)")
    return headlines.pop()


def prepared_items(root: Path, task: str, languages: list[str]) -> dict[str, list[str]]:
    """language -> the ids of the task's prepared items: the grid a full run would answer."""
    items = {}
    for language in languages:
        path = root / paths.PREPARED.format(task=task, language=language)
        if not path.exists():
            raise DataError(f"{path} is missing: the estimate needs the task's prepared items (run the workflow)")
        items[language] = [str(record["id"]) for record in read_jsonl(path)]
    return items


def chosen_languages(observed: pd.DataFrame, languages: list[str] | None, args: argparse.Namespace) -> pd.DataFrame:
    """The outcomes of the languages asked for (all where none were); one without outputs is a DataError."""
    if not languages:
        return observed
    absent = sorted(set(languages) - set(observed["language"]))
    if absent:
        raise DataError(f"no outputs of {args.base} in {absent[0]} under {args.root / paths.OUTCOMES_DIR}/")
    return observed[observed["language"].isin(languages)]


def validation(observed: pd.DataFrame, study: Study, budget: Budget, args: argparse.Namespace) -> pd.DataFrame:
    """The estimate from a designed share of a fully evaluated grid, beside the exhaustive values."""
    truth = exhaustive(observed, study)
    design = choose_study(study.variants, study.items, budget, seed=args.seed, parallel=study.parallel)
    chosen = pd.DataFrame([(lang, v, i) for lang, by_variant in design.items() for v, ids in by_variant.items()
                           for i in ids], columns=["language", "variant", "item"])
    subset = observed.astype({"item": str}).merge(chosen, on=["language", "variant", "item"])
    table = estimate(subset, study, **estimate_options(args)).table
    table = table.merge(truth, on=["language", "statistic"]).rename(columns={"value": "exhaustive"})
    table["error"] = table["estimate"] - table["exhaustive"]
    table["covered"] = (table["low"] <= table["exhaustive"]) & (table["exhaustive"] <= table["high"])
    return table


def estimate_options(args: argparse.Namespace) -> dict:
    """The estimator's settings the command line gives."""
    return {"confidence": args.confidence, "draws": args.draws, "seed": args.seed,
            "variant_variance": args.variant_variance}


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(prog="python -m babeleval estimate", description=__doc__.split("\n\n")[0],
                                    formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parse.add_argument("--model", required=True)
    parse.add_argument("--task", required=True)
    parse.add_argument("--base", required=True, help="the base template whose variants form the set")
    parse.add_argument("--root", type=Path, default=Path("."), help="the repository the run wrote to")
    parse.add_argument("--languages", nargs="+", help="fit only these languages, together (default: every one)")
    parse.add_argument("--parallel", action="store_true", help="the items are the same in every language")
    parse.add_argument("--metric", help="the right/wrong metric modelled (acc, acc_norm; default: the headline "
                       "metric the variants' scores files record)")
    parse.add_argument("--variant-variance", choices=VARIANT_VARIANCES, default=VARIANT_VARIANCES[0],
                       help="how the variants' variance is estimated (docs/variations.md, section 6)")
    parse.add_argument("--confidence", type=float, default=0.9)
    parse.add_argument("--draws", type=int, default=400, help="posterior draws behind each interval")
    parse.add_argument("--seed", type=int, default=0)
    parse.add_argument("--validate", action="store_true", help="estimate from a share of a full grid, beside it")
    parse.add_argument("--fraction", type=float, help="with --validate: the share of each language's cells")
    parse.add_argument("--cells", type=int, help="with --validate: the cells of each language")
    parse.add_argument("--csv", type=Path, help="also write the table here")
    return parse


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        metric = args.metric or recorded_headline(args.root, args.model, args.task, args.base)
        observed = variant_outcomes(args.root, args.model, args.task, args.base, metric)
        observed = chosen_languages(observed, args.languages, args)
        languages = sorted(set(observed["language"]))
        study = Study.of(sorted(set(observed["variant"])), prepared_items(args.root, args.task, languages),
                         args.parallel)
        if args.validate:
            table = validation(observed, study, Budget(cells=args.cells, fraction=args.fraction), args)
        else:
            table = estimate(observed, study, **estimate_options(args)).table
    except BabelevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.model} {args.task} {args.base}: {len(study.variants)} variants; {metric}; "
          f"{args.confidence:.0%} intervals")
    print(table.round(4).to_string(index=False))
    if args.csv:
        table.to_csv(args.csv, index=False)
    return 0
