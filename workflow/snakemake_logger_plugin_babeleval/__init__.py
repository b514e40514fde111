"""Snakemake's console for babeleval: one line when a job starts and one when it ends, the rest as Snakemake prints it.

``[7/16] start score_belebele tiny-llama/paper`` and ``[7/16] done score_belebele tiny-llama/paper`` (the rule and
its wildcards) instead of Snakemake's job blocks (rule, input, output, log, jobid, reason, wildcards, resources: some
15 lines a job, 1,589 lines for the 77 jobs of the default grid); the shell commands, the progress counts, the
run's header (Snakemake's version, host, command) and the per-round "Select jobs to execute..." go too. Errors,
warnings, the planning messages and the run summary pass unchanged, so a failed job still shows its whole block.
Snakemake's log file (``.snakemake/log/``) keeps every block: Snakemake writes it with its own handler, whatever
plugin prints here.

On in the default workflow profile (``profiles/default/config.yaml``: ``logger: [babeleval]``). The full console
comes back with ``--logger-babeleval-full`` (or ``logger-babeleval-full: true`` in a profile), with ``--verbose``,
and for a dry run (``-n``: the blocks are the plan). Snakemake finds the plugin by its module name
(``snakemake_logger_plugin_<name>``), installed with the package (pyproject.toml).
"""

import sys
from dataclasses import dataclass, field
from logging import LogRecord
from typing import Optional

from snakemake.logging import ColorizingTextHandler, DefaultFilter, DefaultFormatter
from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent
from snakemake_interface_logger_plugins.settings import LogHandlerSettingsBase

# what the start and end lines stand for: their fields are on those lines, or in the log file
FOLDED = {LogEvent.SHELLCMD, LogEvent.PROGRESS, LogEvent.JOB_STARTED, LogEvent.RESOURCES_INFO,
          LogEvent.WORKFLOW_STARTED}
# Snakemake's messages, one per scheduling round, that say nothing a start line does not
ROUND_MESSAGES = ("Select jobs to execute...", "Execute ")


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    # a plain bool: Snakemake builds the command-line option from the annotation (so no `from __future__` here)
    full: bool = field(default=False, metadata={
        "help": "Print Snakemake's full job blocks on the console as well (they are always in the log file)."})


def job_label(record: LogRecord) -> str:
    """The rule and its combination: ``score_belebele tiny-llama/belebele/eng_Latn/instruct``."""
    wildcards = getattr(record, "wildcards", None) or {}
    combination = "/".join(str(value) for value in wildcards.values())
    return f"{record.rule_name} {combination}".rstrip()


class LogHandler(LogHandlerBase):
    def __post_init__(self) -> None:
        common = self.common_settings
        self.full = bool(common.verbose or common.dryrun or getattr(self.settings, "full", False))
        # everything that is not a job's start or end: printed as Snakemake's own console handler prints it
        self.console = ColorizingTextHandler(nocolor=common.nocolor, stream=sys.stdout if common.stdout else sys.stderr)
        self.console.addFilter(DefaultFilter(common.quiet, common.debug_dag, common.verbose, common.dryrun,
                                             common.printshellcmds))
        self.console.setFormatter(DefaultFormatter(common.quiet, common.show_failed_logs))
        self.labels: dict[int, str] = {}
        self.total: Optional[int] = None
        self.started = 0
        self.finished = 0

    def emit(self, record: LogRecord) -> None:
        event = getattr(record, "event", None)
        if self.full:
            self.console.handle(record)
        elif event == LogEvent.JOB_INFO:
            self.started += 1
            self.labels[record.jobid] = job_label(record)
            self.line(f"[{self.started}/{self.total or '?'}] start {self.labels[record.jobid]}")
        elif event == LogEvent.JOB_FINISHED:
            self.finished += 1
            self.line(f"[{self.finished}/{self.total or '?'}] done {self.labels.pop(record.job_id, record.job_id)}")
        elif event == LogEvent.RUN_INFO and isinstance(getattr(record, "stats", None), dict):
            self.total = record.stats.get("total")
            self.line(f"{self.total} jobs to run (per rule: the log file, or `snakemake -n`)")
        elif event not in FOLDED and not str(record.msg or "").startswith(ROUND_MESSAGES):
            self.console.handle(record)

    def line(self, text: str) -> None:
        self.console.stream.write(text + "\n")
        self.console.flush()

    def close(self) -> None:
        self.console.close()
        super().close()

    @property
    def writes_to_stream(self) -> bool:
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True  # the console handler filters what it prints; start and end lines always print

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False
