"""Did a template edit help, per language, and is the difference real? Runs side by side, from their per-item outputs.

    python -m babeleval compare                       # the workspace against HEAD
    python -m babeleval compare terse-instruct        # a DVC experiment (or any git revision) against the workspace
    python -m babeleval compare main terse-instruct   # two revisions / experiments; more: each against the first

For every (model, task, language, template) both sides hold, on the task's headline metric: the score under
each side, the difference with its paired bootstrap interval, and the paired p-value (exact McNemar for
right/wrong metrics, paired bootstrap otherwise) on the items both sides answered, Holm-adjusted over the
rows of a task whose outputs changed; the table shows the difference's interval adjusted the same way
(``significance.holm_level_interval``), beside the adjusted p-value. Parse-failure rates are shown beside generated scores, so a format change is not read as
a change in answering.

Another revision's outputs are read through DVC (``dvc.api.DVCFileSystem``): files DVC tracks come from its
cache, so run ``dvc pull`` (or ``dvc exp pull <remote> <exp>``) first where the cache lacks them. No model is
loaded and nothing is recomputed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

import numpy as np
import pandas as pd

from ..core import paths
from ..core.errors import BabelevalError
from ..core.paths import Combo, combo_from_path
from ..grid import run_lock
from ..grid.params import analysis_setting_errors
from ..analysis.bootstrap import item_data
from ..analysis.records import metric_options, slim
from ..analysis.power import made_test_mde
from ..analysis.settings import DEFAULT_SETTINGS, PARAMS_KEYS
from ..analysis.significance import compare as paired_test
from ..analysis.significance import difference_summary, holm, holm_level_interval, resampled_difference
from ..score.metrics import ACCURACY, get_metric, headline_metric

WORKSPACE = "workspace"
COLUMNS = ["model", "task", "language", "template", "metric", "n_items", "score_a", "score_b", "delta",
           "delta_low", "delta_high", "pf_a", "pf_b", "test", "p_value", "changed", "adj_low", "adj_high", "p_holm",
           "significant", "mde"]


def resolve_revision(repo: Path, name: str) -> str:
    """A git revision, or a DVC experiment's name (its ref under refs/exps), as a commit id."""
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], cwd=repo,
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return proc.stdout.strip()
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname) %(objectname)", "refs/exps"], cwd=repo,
                          capture_output=True, text=True).stdout.split("\n")
    found = [line.split()[1] for line in refs if line and line.split()[0].endswith("/" + name)]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        raise BabelevalError(f"'{name}' names {len(found)} DVC experiments: give its commit instead "
                             "(`dvc exp show` lists them)")
    raise BabelevalError(f"'{name}' is neither a git revision nor a DVC experiment of {repo} "
                         "(`dvc exp list --all-commits` and `git log` list them)")


@dataclass
class Side:
    """The outputs of one run: the workspace, or a revision read through DVC."""

    label: str
    repo: Path
    rev: str | None = None  # None: the workspace

    def _fs(self):
        from dvc.api import DVCFileSystem

        return DVCFileSystem(str(self.repo), rev=self.rev)

    def files(self, folder: str, suffix: str) -> list[str]:
        if self.rev is None:
            return sorted(p.relative_to(self.repo).as_posix() for p in (self.repo / folder).rglob(f"*{suffix}"))
        fs = self._fs()
        if not fs.exists(folder):
            return []
        return sorted(str(PurePosixPath(p).relative_to("/")) if p.startswith("/") else p
                      for p in fs.find(folder) if p.endswith(suffix))

    def read(self, path: str) -> str:
        if self.rev is None:
            return (self.repo / path).read_text(encoding="utf-8")
        try:
            with self._fs().open(path, mode="r", encoding="utf-8") as handle:
                return handle.read()
        except FileNotFoundError as exc:
            raise BabelevalError(f"{self.label}: {path} is tracked by DVC but not in the local cache: run "
                                 f"`dvc pull` (an experiment: `dvc exp pull <remote> {self.label}`)") from exc


def load_side(side: Side) -> tuple[dict[Combo, list[dict[str, Any]]], dict[Combo, dict[str, Any]]]:
    """Raw records (slimmed) and the scores summaries, by combination."""
    raw: dict[Combo, list[dict[str, Any]]] = {}
    for path in side.files(paths.RAW_DIR, ".jsonl"):
        raw[combo_from_path(path)] = [slim(json.loads(line)) for line in side.read(path).splitlines() if line.strip()]
    summaries: dict[Combo, dict[str, Any]] = {}
    for path in side.files(paths.SCORES_DIR, ".json"):
        summaries[combo_from_path(path)] = json.loads(side.read(path))
    if not raw and side.rev is None:
        raise BabelevalError(f"{side.label}: no per-item outputs under {paths.RAW_DIR}/ (run the workflow first)")
    if not raw:  # the usual case: a run not committed yet, so the last commit records no outputs
        raise BabelevalError(f"{side.label}: no per-item outputs recorded at this revision (its dvc.lock has none). "
                             f"After a run, make it the baseline to compare against with\n  {run_lock.BASELINE}")
    return raw, summaries


def delta_interval(records_a, records_b, metric: str, *, seed: int, n_samples: int, confidence: float,
                   options: dict[str, Any] | None = None) -> tuple[float, float, float]:
    """Percentile interval of score_b - score_a, resampling the items both sides answered (the same draws), and
    the resampled difference's standard error."""
    a, b = item_data(metric, records_a, options), item_data(metric, records_b, options)
    if a is None or b is None:
        return float("nan"), float("nan"), float("nan")
    common = sorted(set(a.ids) & set(b.ids))
    if not common:
        return float("nan"), float("nan"), float("nan")
    return difference_summary(resampled_difference(b.subset(common), a.subset(common), seed=seed,
                                                    n_samples=n_samples), confidence)


def parse_failure(records: list[dict[str, Any]]) -> float | None:
    if not any("response" in r for r in records):
        return None  # log-likelihood scoring: nothing to parse
    return sum(not r.get("parsed", True) for r in records) / len(records) if records else None


def _reported(summaries: dict[Combo, dict[str, Any]], combo: Combo) -> set[str]:
    """The metrics a combination's scores file reports (accuracy where it has none)."""
    summary = summaries.get(combo)
    return set(summary.get("metrics", {})) if summary else {ACCURACY}


def compare_sides(a: tuple[dict, dict], b: tuple[dict, dict], *, seed: int = DEFAULT_SETTINGS.seed,
                  n_samples: int = DEFAULT_SETTINGS.samples, confidence: float = DEFAULT_SETTINGS.confidence,
                  alpha: float = DEFAULT_SETTINGS.alpha) -> pd.DataFrame:
    """One row per combination both sides hold, on its headline metric; ``delta`` = b - a (shown scale)."""
    raw_a, summaries_a = a
    raw_b, summaries_b = b
    rows = []
    for combo in sorted(set(raw_a) & set(raw_b)):
        metric = headline_metric(_reported(summaries_a, combo) & _reported(summaries_b, combo))
        if metric is None:
            continue
        options = metric_options(summaries_a.get(combo, {}))
        test = paired_test(raw_a[combo], raw_b[combo], metric, seed=seed, n_samples=n_samples, options=options)
        if test is None:
            continue
        low, high, se = delta_interval(raw_a[combo], raw_b[combo], metric, seed=seed, n_samples=n_samples,
                                       confidence=confidence, options=options)
        pf_a, pf_b = parse_failure(raw_a[combo]), parse_failure(raw_b[combo])
        shown = get_metric(metric).shown
        rows.append({**combo._asdict(), "metric": metric, "n_items": test["n_items"],
                     "score_a": shown(test["score_a"]), "score_b": shown(test["score_b"]),
                     "delta": shown(test["score_b"]) - shown(test["score_a"]),
                     "delta_low": shown(low), "delta_high": shown(high),
                     "pf_a": None if pf_a is None else 100.0 * pf_a, "pf_b": None if pf_b is None else 100.0 * pf_b,
                     "test": test["test"], "p_value": test["p_value"], "a_only": test["a_only"],
                     "b_only": test["b_only"], "delta_se": se})
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "a_only", "b_only", "delta_se"])
    if frame.empty:
        return frame[COLUMNS]
    # a combination whose outputs did not change (another template's edit) is no test: Holm counts the others
    same_pf = (frame["pf_a"].isna() & frame["pf_b"].isna()) | (frame["pf_a"] == frame["pf_b"])
    frame["changed"] = (frame["delta"] != 0) | (frame["p_value"] < 1) | ~same_pf
    frame["p_holm"] = 1.0
    frame["adj_low"] = frame["adj_high"] = frame["mde"] = float("nan")
    for _, index in frame[frame["changed"]].groupby(["task", "metric"]).groups.items():
        frame.loc[index, "p_holm"] = holm(frame.loc[index, "p_value"].to_numpy(float))
        frame.loc[index, ["adj_low", "adj_high"]] = [_adjusted(frame.loc[i], alpha, len(index)) for i in index]
        frame.loc[index, "mde"] = [_mde(frame.loc[i], alpha, len(index), n_samples) for i in index]
    frame["significant"] = frame["p_holm"].astype(float) < alpha
    return frame[COLUMNS]


def _adjusted(row: pd.Series, alpha: float, family_size: int) -> tuple[float, float]:
    """The row's interval of b - a at its Holm level, on the shown scale (``significance.holm_level_interval``)."""
    metric = get_metric(row["metric"])
    # the interval of a - b on the metric's scale, turned into b - a on the shown one
    low, high = holm_level_interval(metric.stored(-row["delta"]), row["delta_se"], int(row["n_items"]),
                                    row["a_only"], row["b_only"], alpha, family_size)
    return metric.shown(-high), metric.shown(-low)


def _mde(row: pd.Series, alpha: float, family_size: int, samples: int) -> float:
    """The smallest difference the row's test could find with 80% power at its Holm level, on the shown scale
    (``power.made_test_mde``: an exact McNemar test's or a paired bootstrap's); NaN where it cannot be said."""
    found = made_test_mde(int(row["n_items"]), row["a_only"], row["b_only"], row["delta_se"], alpha, family_size,
                          samples)
    return float("nan") if found is None else get_metric(row["metric"]).shown(found)


def _num(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def render(frame: pd.DataFrame, label_a: str, label_b: str, alpha: float) -> str:
    """A terminal table per task: what changed first, then the rest; a sentence when nothing changed."""
    if frame.empty:
        return f"{label_a} and {label_b} share no (model, task, language, template) with per-item outputs."
    lines = [f"{label_b} against {label_a}: delta = {label_b} - {label_a} on each task's headline metric "
             f"(accuracy in %, chrF/BLEU/F1 0-100) [its interval], p: paired test; both Holm-adjusted over a task's "
             f"changed rows (the interval at level 1 - {alpha}/m, m the rows); pf: parse-failure rate, %.", ""]
    for task, group in frame.groupby("task", sort=True):
        changed = group[group["changed"]]
        lines.append(f"## {task} ({group['metric'].iloc[0]})")
        if changed.empty:
            lines += [f"No difference: every combination scores and parses the same under {label_a} and "
                      f"{label_b} ({len(group)} compared).", ""]
            continue
        table = pd.DataFrame({
            "model": changed["model"], "language": changed["language"], "template": changed["template"],
            label_a: [_num(v) + ("" if pf is None or pd.isna(pf) else f" (pf {_num(pf)})")
                      for v, pf in zip(changed["score_a"], changed["pf_a"])],
            label_b: [_num(v) + ("" if pf is None or pd.isna(pf) else f" (pf {_num(pf)})")
                      for v, pf in zip(changed["score_b"], changed["pf_b"])],
            "delta": [f"{d:+.1f} [{_num(lo)}, {_num(hi)}]"
                      for d, lo, hi in zip(changed["delta"], changed["adj_low"], changed["adj_high"])],
            "p": [f"{p:.3g}" + (" *" if s else "") for p, s in zip(changed["p_holm"], changed["significant"])],
            "MDE": [_num(m) for m in changed["mde"]],
            "n": changed["n_items"].astype(int).astype(str),
        })
        lines.append(table.to_markdown(index=False, disable_numparse=True))
        same = len(group) - len(changed)
        if same:
            lines.append(f"({same} other combination(s) unchanged.)")
        lines.append("")
    lines.append("* significant after Holm-Bonferroni correction. MDE: the smallest difference (points) the test "
                 "could find with 80% power at its Holm level and the discordance its items showed: a difference "
                 "not significant could not have been found below it.")
    lines += _undetected(frame)
    return "\n".join(lines)


def _undetected(frame: pd.DataFrame) -> list[str]:
    """One sentence per combination whose change is not significant, with what its design could not detect."""
    rows = frame[frame["changed"] & ~frame["significant"].astype(bool) & frame["mde"].notna()]
    return [f"{r.model}/{r.task}/{r.language}/{r.template}: {r.delta:+.1f}, not significant; this design could not "
            f"detect less than {r.mde:.1f} points" for r in rows.itertuples(index=False)]


def sides_for(repo: Path, names: Iterable[str]) -> list[Side]:
    names = list(names)
    if not names:
        names = ["HEAD"]
    sides = [Side(name, repo, resolve_revision(repo, name)) for name in names]
    if len(sides) == 1:
        sides.append(Side(WORKSPACE, repo))
    return sides


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m babeleval compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("revisions", nargs="*", metavar="REV|EXP",
                        help="git revisions or DVC experiment names; none: HEAD; one: against the workspace; "
                             "several: each against the first")
    parser.add_argument("--repo", default=".", help="the repository (default: the current directory)")
    parser.add_argument("--task", action="append", help="only these tasks (repeatable)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SETTINGS.seed, help=f"bootstrap seed (default {DEFAULT_SETTINGS.seed})")
    parser.add_argument("--samples", type=int, default=DEFAULT_SETTINGS.samples,
                        help=f"bootstrap resamples (default {DEFAULT_SETTINGS.samples})")
    parser.add_argument("--confidence", type=float, default=DEFAULT_SETTINGS.confidence,
                        help="level of the unadjusted interval, the CSV's delta_low/delta_high (default "
                             f"{DEFAULT_SETTINGS.confidence}); the table shows the interval at the Holm level")
    parser.add_argument("--alpha", type=float, default=DEFAULT_SETTINGS.alpha,
                        help="significance level after Holm correction, and of the adjusted interval (default "
                             f"{DEFAULT_SETTINGS.alpha})")
    parser.add_argument("--csv", help="also write every compared row to this CSV file")
    args = parser.parse_args(argv)
    # the flags are params.yaml's analysis settings, under the same bounds (its schema's)
    given = {PARAMS_KEYS.get(name, name): (name, getattr(args, name)) for name in ("confidence", "samples", "alpha")}
    found = analysis_setting_errors({key: value for key, (_, value) in given.items()})
    for key, message in found.items():
        name, value = given[key]
        print(f"error: --{name} {value}: {message} (as params.yaml's analysis.{key})", file=sys.stderr)
    if found:
        return 2
    repo = Path(args.repo).resolve()
    try:
        sides = sides_for(repo, args.revisions)
        loaded = {side.label: load_side(side) for side in sides}
        base = sides[0]
        frames = []
        for other in sides[1:]:
            frame = compare_sides(loaded[base.label], loaded[other.label], seed=args.seed, n_samples=args.samples,
                                  confidence=args.confidence, alpha=args.alpha)
            if args.task:
                frame = frame[frame["task"].isin(args.task)]
            print(render(frame, base.label, other.label, args.alpha))
            frames.append(frame.assign(a=base.label, b=other.label))
        if args.csv:
            pd.concat(frames).to_csv(args.csv, index=False, float_format="%.6f")
    except BabelevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0

