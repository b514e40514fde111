"""How sensitive is a model to the prompt's format, from a fraction of a variant set's cells?

    python -m babeleval estimate --model tiny-llama --task belebele --base formatspread --parallel
    python -m babeleval estimate --model tiny-llama --task belebele --base formatspread --parallel \\
        --validate --fraction 0.1

Reads the per-item outcomes (``results/outcomes/<model>/<task>/<language>/<template>.parquet``) of the variants
the base template's family expands to in params.yaml (``--params``; outputs of any other variant of the base left
on disk, from an earlier study, are named and ignored) and the task's prepared items (``data/prepared/<task>/<language>.jsonl``: the items each
variant would answer in a full run), fits the budgeted estimator (babeleval.analysis.budget_estimate) and prints
per language the mean over variants, the 5..95% quantiles, the best, the worst and the spread, each with its
interval, the method that gave it (the model, or the plain per-variant mean where that is expected to be closer),
the cells it used and its ``check``: few items per variant for the method, an interval that rests on one
simulated study, or one so wide that the budget cannot see the statistic. Flagged rows are also listed on stderr.

``--validate``: every variant answered every item; the estimate is made from a designed ``--fraction`` (or
``--cells``) of them and printed beside the exhaustive values, so the estimator's error on this model shows.
``--parallel``: the task's items are the same in every language (Belebele), so languages share item effects.
``--metric``: the right/wrong metric whose per-item outcome is modelled (``acc``, ``acc_norm``); by default the
headline metric the variants' scores files record, as the workflow's own estimate models it.
``--all-on-disk``: fit every variant of the base found on disk instead of params.yaml's family (a run without
a params.yaml).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from ..prompts.budget_design import Budget, choose_study
from ..analysis.budget_estimate import MIN_REPLICATES, Study, estimate, exhaustive
from ..analysis.budget_table import outcome_column, outcomes_of
from ..analysis.records import headline_of, load_outcomes, load_scores
from ..core import paths
from ..core.errors import BabelevalError, ConfigError, DataError
from ..core.jsonl import read_jsonl
from ..grid.params import load_params
from ..prompts.variants import base_name


def family_variants(params: Path, root: Path, task: str, base: str) -> tuple[str, ...]:
    """The variants of ``base`` that params.yaml's grid expands the task to (its listed templates and the variants
    ``variants:`` draws); a task not in the grid, or a base without variants there, is a ConfigError."""
    if not params.exists():
        raise ConfigError(f"{params} does not exist: the estimate reads the variants its family expands to; give "
                          "--params, or --all-on-disk to fit every variant of the base found on disk")
    grid = load_params(params, root=root)
    if task not in grid.tasks:
        raise ConfigError(f"{params}: task {task} is not in the grid (tasks: {', '.join(sorted(grid.tasks))})")
    found = tuple(sorted(name for name in grid.tasks[task].templates if base_name(name) == base))
    if len(found) < 2:
        raise ConfigError(f"{params}: tasks.{task} expands {base} to {len(found)} template(s); the estimate needs "
                          f"a variant set (tasks.{task}.variants.{base})")
    return found


def variant_outcomes(root: Path, model: str, task: str, base: str, metric: str,
                     family: tuple[str, ...] | None) -> tuple[pd.DataFrame, list[str]]:
    """language, variant, item, correct: every per-item outcome under ``metric`` of the family's variants (every
    variant of the base on disk where ``family`` is None), and the variants on disk left out."""
    folder = root / paths.OUTCOMES_DIR / model / task
    files = [path for path in sorted(folder.glob("*/*.parquet")) if base_name(path.stem) == base]
    chosen = [path for path in files if family is None or path.stem in family]
    if not chosen:
        raise DataError(f"no per-item outputs of {base} or its variants under {folder}/ (run the workflow first)")
    if family is not None:
        absent = sorted(set(family) - {path.stem for path in chosen})
        if absent:
            raise DataError(f"params.yaml's {base} family has {len(family)} variants, and {len(absent)} have no "
                            f"outputs under {folder}/, e.g. {absent[0]} (run the workflow first)")
    leftovers = sorted({path.stem for path in files} - {path.stem for path in chosen})
    return outcomes_of(load_outcomes(chosen, ("id", outcome_column(metric))), metric), leftovers


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
    covered = (table["low"] <= table["exhaustive"]) & (table["exhaustive"] <= table["high"])
    table["covered"] = covered.where(table["method"] != "refused")  # a refused row: neither covered nor missed
    return table


def estimate_options(args: argparse.Namespace) -> dict:
    """The estimator's settings the command line gives."""
    return {"confidence": args.confidence, "draws": args.draws, "seed": args.seed, "replicates": args.replicates}


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
    parse.add_argument("--params", type=Path, help="the grid whose family is estimated (default: ROOT/params.yaml)")
    parse.add_argument("--all-on-disk", action="store_true",
                       help="fit every variant of the base found on disk, not params.yaml's family")
    parse.add_argument("--replicates", type=int, default=10, help="simulated studies behind each interval")
    parse.add_argument("--confidence", type=float, default=0.9)
    parse.add_argument("--draws", type=int, default=400, help="posterior draws behind each interval")
    parse.add_argument("--seed", type=int, default=0)
    parse.add_argument("--validate", action="store_true", help="estimate from a share of a full grid, beside it")
    parse.add_argument("--fraction", type=float, help="with --validate: the share of each language's cells")
    parse.add_argument("--cells", type=int, help="with --validate: the cells of each language")
    parse.add_argument("--csv", type=Path, help="also write the table here")
    return parse


def setting_errors(args: argparse.Namespace) -> list[str]:
    """The estimator's settings out of range, each named with what it must be: checked before anything is read."""
    found = []
    if args.replicates < MIN_REPLICATES:
        found.append(f"--replicates {args.replicates}: simulated studies behind each interval, at least "
                     f"{MIN_REPLICATES} (the choice between the model and the plain mean compares their errors "
                     "study by study)")
    if not 0 < args.confidence < 1:
        found.append(f"--confidence {args.confidence}: a share, above 0 and below 1")
    if args.draws < 1:
        found.append(f"--draws {args.draws}: posterior draws behind each estimate, at least 1")
    return found


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    found = setting_errors(args)
    if found:
        print("\n".join(f"error: {message}" for message in found), file=sys.stderr)
        return 1
    try:
        metric = args.metric or recorded_headline(args.root, args.model, args.task, args.base)
        family = None if args.all_on_disk else family_variants(args.params or args.root / "params.yaml",
                                                               args.root, args.task, args.base)
        observed, leftovers = variant_outcomes(args.root, args.model, args.task, args.base, metric, family)
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
    if leftovers:
        print(f"ignored {len(leftovers)} variant(s) of {args.base} on disk that params.yaml's family does not "
              f"expand to: {', '.join(leftovers)}", file=sys.stderr)
    print(table.round(4).to_string(index=False))
    for row in table[table["check"] != ""].itertuples():
        print(f"check: {row.language} {row.statistic}: {row.check}", file=sys.stderr)
    if args.csv:
        table.to_csv(args.csv, index=False)
    return 0
