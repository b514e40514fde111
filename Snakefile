# babeleval: models x tasks x languages x prompt templates.
#
#   snakemake --cores 8 --resources gpu=1           # a workstation
#   snakemake --workflow-profile workflow/profiles/slurm   # a SLURM cluster
#
# params.yaml is the single source of the grid; it is validated before any job.

import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

min_version("9.0")


sys.path.insert(0, str(Path(workflow.basedir) / "workflow"))
from babeleval.grid import paths, resource_names, run_lock, scheduling, template_hashes
from babeleval.grid.params import read_params_file

# A second Snakemake while one runs here, or after one was killed: said with who holds the directory and what to
# do (babeleval.grid.run_lock), before Snakemake's own advice (--unlock, --cleanup-metadata) could mislead.
# Jobs Snakemake starts (exec mode remote or subprocess) read this file too: they run under the first's lock.
if workflow.exec_mode.name == "DEFAULT" and run_lock.takes_lock(sys.argv):
    _held = run_lock.held_message()
    if _held:
        raise WorkflowError(_held)

# An empty params.yaml, or one that is not YAML, stops here with the file and line
# (configfile: would say neither).
read_params_file("params.yaml")


configfile: "params.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/plan.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/prompts.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/extract.smk"
include: "workflow/rules/score.smk"
include: "workflow/rules/shared_prefix.smk"
include: "workflow/rules/leaderboard.smk"
include: "workflow/rules/summary_tables.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/budget.smk"
include: "workflow/rules/run_summary.smk"


rule all:
    input:
        paths.LEADERBOARD_CSV,
        paths.LEADERBOARD_MD,
        paths.METRICS_JSON,
        paths.HEADLINE_JSON,
        # per-template and per-language summaries: dvc plots, the Snakemake report (workflow/rules/summary_tables.smk)
        paths.BY_TEMPLATE,
        paths.BY_LANGUAGE,
        # analysis: tables, figures and the HTML report (workflow/rules/analysis.smk)
        paths.REPORT,
    default_target: True


# A name given with --resources that no job holds limits nothing: said before any job (babeleval.grid.resource_names).
if workflow.is_main_process:
    for _line in resource_names.unused_resources(
        workflow.global_resources, {name for rule in workflow.rules for name in rule.resources}
    ):
        print(_line, file=sys.stderr)


# A run records who holds the directory and keeps DVC out while it works (babeleval.grid.run_lock), and writes the
# templates' hashes, DVC's params of the evaluate stage (babeleval.grid.template_hashes).
onstart:
    run_lock.claim()
    # Snakemake's default job rate limit makes its main process poll every waiting job's inputs about once a second
    # per finished job (babeleval.grid.scheduling); a limit the user sets is kept.
    scheduling.drop_default_rate_limit(workflow.scheduler)
    template_hashes.write(GRID)


# Every run ends with its summary (workflow/rules/summary.smk). A run that did not produce what it was asked for
# must not exit 0: Snakemake plans a run once, at the start; should a plan ever leave a requested file out, the
# run fails here, naming the files and what to run next. (--until and --omit-from ask for less than the targets:
# not checked then.)
onsuccess:
    run_lock.release()
    partial = workflow.dag_settings.until or workflow.dag_settings.omit_from
    missing = [] if partial else sorted({str(f) for job in workflow.dag.targetjobs for f in [*job.input, *job.output]
                                         if not Path(f).exists()})
    print_run_summary(not missing, log)
    recorded = run_lock.record_outputs(whole_grid=not partial and not missing
                                       and {job.rule.name for job in workflow.dag.targetjobs} == {"all"})
    if recorded:
        print(recorded, file=sys.stderr)
    if missing:
        raise WorkflowError(
            "the run ended without these requested files (nothing failed, but the plan left them out):\n  "
            + "\n  ".join(missing[:20]) + ("\n  ..." if len(missing) > 20 else "")
            + "\nRun the same command again to build them (see docs/troubleshooting.md).")


# A failed job (with --keep-going too) ends the run non-zero, and its summary names the failed jobs and the
# requested files the run did not bring up to date: a leaderboard or report left on disk from an earlier run is
# then named stale, never silently taken for this run's.
onerror:
    run_lock.release()
    requested = sorted({str(f) for job in workflow.dag.targetjobs for f in [*job.input, *job.output]})
    print_run_summary(False, log, targets=requested)
