"""The few lines a run ends with: what ran, what was reused, what failed, what it cost, and where to look next.

Built from the files the run leaves (no Snakemake internals) and the scores files there were when it started
(``existing``): a combination whose scores file was written during this run is *new* when it had none before
and *rescored* when it had one (scored again: a changed template, parser or metric, or a generation job that
answered it again, from the cache where it could); one whose scores file is older *was reused* (up to date); one
with no scores file *failed or did not run*. Tokens, cache hits and generation time per model come from every
usage file written in this run (``results/usage/``: each generation job's, and the shared-prefix job's of a
variation study, which does the study's model work). A failed job is named from Snakemake's log: its rule, its
log file, the last line of that log (the error) and the params.yaml entry it ran for.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..core import paths
from ..core.progress import clock_text
from ..generate.spend import read_ledger
from ..score.metrics import PARSE_FAILURE_RATE
from .run_lock import RESUME


@dataclass
class ModelCost:
    jobs: int = 0
    requests: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class FailedJob:
    """A job Snakemake reported as failed: its rule, its log file and that log's last line."""

    rule: str
    log: str | None = None
    last_line: str | None = None

    @property
    def params_entry(self) -> str | None:
        """The params.yaml entry the job ran for, from its log path (``core.paths.log``: stage, then labels)."""
        parts = Path(self.log).relative_to(paths.LOGS).with_suffix("").parts if self.log else ()
        if len(parts) >= 3 and parts[0] in MODEL_STAGES:
            return f"models.{parts[1]} (task {parts[2]})"
        if len(parts) >= 2 and parts[0] in TASK_STAGES:
            return f"tasks.{parts[1]}"
        return None


# job log stages (``core.paths.log``'s first part) whose next labels are a model then a task, or a task
MODEL_STAGES = ("generate", "score", "shared_prefix")
TASK_STAGES = ("prepare_data", "render_prompts")


@dataclass
class Summary:
    new: list[tuple] = field(default_factory=list)
    rescored: list[tuple] = field(default_factory=list)
    reused: list[tuple] = field(default_factory=list)
    missing: list[tuple] = field(default_factory=list)
    items: int = 0
    parse_failures: int = 0
    generated_items: int = 0
    costs: dict[str, ModelCost] = field(default_factory=dict)
    failed_jobs: list[FailedJob] = field(default_factory=list)
    # model -> its spending ledger, where a capped API model spent during this run (babeleval.generate.spend)
    caps: dict[str, dict] = field(default_factory=dict)
    started: float = 0.0  # when the run started (epoch s)


def _scores_path(root: Path, combo: tuple[str, str, str, str]) -> Path:
    model, task, language, template = combo
    return root / paths.SCORES.format(model=model, task=task, language=language, template=template)


def existing(root: Path, combinations: Iterable[tuple[str, str, str, str]]) -> set[tuple]:
    """The combinations that have a scores file now: taken when a run starts, it tells new from rescored."""
    return {combo for combo in combinations if _scores_path(root, combo).exists()}


def collect(root: Path, combinations: Iterable[tuple[str, str, str, str]], started: float,
            before: set[tuple] | None = None) -> Summary:
    """What the files under ``root`` say about the combinations, for a run that started at ``started`` (epoch s)
    with scores files for the combinations ``before`` (``existing``; None: unknown, every rewritten one is new)."""
    summary = Summary(started=started)
    for combo in combinations:
        path = _scores_path(root, combo)
        if not path.exists():
            summary.missing.append(combo)
            continue
        if path.stat().st_mtime < started:
            summary.reused.append(combo)
        else:
            (summary.rescored if before is not None and combo in before else summary.new).append(combo)
        try:
            scores = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if PARSE_FAILURE_RATE in scores.get("metrics", {}):  # generated answers, read by a parser
            summary.generated_items += int(scores.get("n", 0))
            summary.parse_failures += int(scores.get("parse_failures", 0))
        summary.items += int(scores.get("n", 0))
    add_costs(summary, root, started)
    add_caps(summary, root, started)
    return summary


def add_caps(summary: Summary, root: Path, started: float) -> None:
    """The ledgers of capped API models written since ``started``: what each spent, and whether it stopped."""
    spend_dir = root / Path(paths.SPEND).parent
    for path in sorted(spend_dir.glob("*.json")) if spend_dir.is_dir() else []:
        if path.stat().st_mtime >= started:
            ledger = read_ledger(path)
            if ledger.get("cap"):
                summary.caps[path.stem] = ledger


def _cap_line(model: str, ledger: dict, started: float) -> str:
    line = (f"  {model}: cap {ledger['cap']}: spent over every run {ledger.get('tokens', 0):,} tokens"
            + (f", cost {ledger['cost']:.4g}" if ledger.get("cost") else ""))
    stopped = ledger.get("stopped") or {}
    if stopped.get("time", 0) >= started:
        line += (f"; STOPPED before crossing it: {stopped['answered']} request(s) answered and kept in the cache, "
                 f"{stopped['not_sent']} not sent: raise the cap in params.yaml (models.{model}) and rerun to go "
                 "on from the cache")
    return line


def add_costs(summary: Summary, root: Path, started: float) -> None:
    """Every usage file written since ``started``: one per job that asked a model (``results/usage/{model}/...``)."""
    usage_dir = root / paths.USAGE.split("{", 1)[0]  # results/usage/: the shared-prefix usage files are under it too
    for path in sorted(usage_dir.glob("*/**/*.json")) if usage_dir.is_dir() else []:
        if path.stat().st_mtime < started:
            continue
        try:
            usage = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        # an extraction job's file lies under the model it read, and names the model it asked
        model = str(usage.get("model") or path.relative_to(usage_dir).parts[0])
        cost = summary.costs.setdefault(model, ModelCost())
        tokens = usage.get("tokens_computed") or {}
        cost.jobs += 1
        cost.requests += int(usage.get("requests", 0))
        cost.cache_hits += int(usage.get("cache_hits", 0))
        cost.prompt_tokens += int(tokens.get("prompt", 0))
        cost.completion_tokens += int(tokens.get("completion", 0))
        cost.seconds += float(usage.get("seconds", 0.0))


ERROR_BLOCK = re.compile(r"^Error in rule (?P<rule>\S+):\n(?P<body>(?:[ \t]+.*\n?)*)", re.MULTILINE)
LOG_LINE = re.compile(r"^\s+log: (?P<log>\S+)", re.MULTILINE)


def failed_jobs(snakemake_log: str | None, root: Path = Path(".")) -> list[FailedJob]:
    """The jobs Snakemake's log reports as failed (its ``Error in rule ...:`` blocks), each with the last
    non-empty line of its own log."""
    try:
        text = Path(snakemake_log).read_text(encoding="utf-8", errors="replace") if snakemake_log else ""
    except OSError:
        return []
    jobs = []
    for block in ERROR_BLOCK.finditer(text):
        found = LOG_LINE.search(block["body"])
        log = found["log"].rstrip(",") if found else None
        jobs.append(FailedJob(block["rule"], log, _last_line(root / log) if log else None))
    return jobs


def failed_job_logs(root: Path, started: float) -> list[FailedJob]:
    """Job logs written since ``started`` that end in an error line: the failed jobs, where Snakemake's log does
    not list them (``--quiet`` leaves its ``Error in rule`` blocks out). The rule is the log's stage."""
    logs = root / paths.LOGS
    jobs = []
    for path in sorted(logs.rglob("*.log")) if logs.is_dir() else []:
        if path.stat().st_mtime < started:
            continue
        last = _last_line(path)
        if last and ERROR_LINE.search(last):
            relative = path.relative_to(root).as_posix()
            jobs.append(FailedJob(path.relative_to(logs).parts[0], relative, last))
    return jobs


# the last line of a job log that failed: the package's ERROR line, or an uncaught exception's
ERROR_LINE = re.compile(r" ERROR |^\w+(Error|Exception)\b")


def _last_line(path: Path) -> str | None:
    try:
        lines_ = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return None
    lines_ = [line for line in lines_ if line]
    return lines_[-1] if lines_ else None


def _failed_text(summary: Summary, succeeded: bool) -> str:
    if succeeded:
        return f"{len(summary.missing)} failed or not run"
    jobs = f"{len(summary.failed_jobs)} job(s) failed" if summary.failed_jobs else "a job failed (see the log)"
    return f"{len(summary.missing)} not scored; {jobs}"


def _cost_line(model: str, cost: ModelCost) -> str:
    return (f"  {model}: {cost.jobs} job(s) that asked the model, {cost.requests} requests, {cost.cache_hits} from "
            f"the cache; tokens paid this run: {cost.prompt_tokens} in, {cost.completion_tokens} out; generation "
            f"time {clock_text(cost.seconds)}")


def _failed_job_lines(jobs: list[FailedJob]) -> list[str]:
    out = []
    for job in jobs[:5]:
        entry = f"; params.yaml {job.params_entry}" if job.params_entry else ""
        out.append(f"  failed: rule {job.rule}{entry}; log {job.log or '(none)'}"
                   + (f"\n    last line: {job.last_line}" if job.last_line else ""))
    if len(jobs) > 5:
        out.append(f"  ... and {len(jobs) - 5} more failed job(s) (Snakemake's log lists them)")
    return out


def lines(summary: Summary, *, succeeded: bool, wall_seconds: float, log: str | None = None,
          omitted: int = 0) -> list[str]:
    total = len(summary.new) + len(summary.rescored) + len(summary.reused) + len(summary.missing)
    out = [f"babeleval: run {'finished' if succeeded else 'FAILED'} in {clock_text(wall_seconds)}: "
           f"{total} combinations: {len(summary.new)} new, {len(summary.rescored)} rescored, "
           f"{len(summary.reused)} reused (up to date), {_failed_text(summary, succeeded)}"]
    if omitted:
        out.append(f"  left out of the grid: {omitted} combinations, each with its reason in {paths.PLAN_OMITTED}")
    if summary.generated_items:
        out.append(f"  parse failures: {summary.parse_failures} of {summary.generated_items} generated answers "
                   f"({summary.parse_failures / summary.generated_items:.1%})")
    out += [_cost_line(model, cost) for model, cost in sorted(summary.costs.items())]
    out += [_cap_line(model, ledger, summary.started) for model, ledger in sorted(summary.caps.items())]
    out += _failed_job_lines(summary.failed_jobs)
    if summary.missing and not succeeded:
        shown = ", ".join("/".join(c) for c in summary.missing[:5])
        more = f" and {len(summary.missing) - 5} more" if len(summary.missing) > 5 else ""
        out.append(f"  not scored: {shown}{more}")
    if succeeded:
        out.append(f"  next: {paths.LEADERBOARD_MD} (tables), {paths.REPORT} (analysis), "
                   "`python -m babeleval compare` (against the last commit)")
    else:
        out.append(f"  next: the failed job's log (named above{'; Snakemake log: ' + log if log else ''}); "
                   f"after a killed run, resume with `{RESUME}` (docs/troubleshooting.md)")
    return out


def stale_lines(stale: list[str]) -> list[str]:
    """The requested files a failed run did not bring up to date: a leaderboard or report on disk from an earlier
    run does not hold this run's results."""
    if not stale:
        return []
    return [f"  not brought up to date (stale or missing; they do not include this run's results): {', '.join(stale)}"]
