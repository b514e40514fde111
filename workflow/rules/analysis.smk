# Analysis: raw per-item outputs and the leaderboard -> tables, figures and one HTML report (CPU, no model).
# Settings come from params.yaml `analysis` (see ANALYSIS in common.smk).

from babeleval.analysis.figures import figure_targets

ANALYSIS_DIR = "results/analysis"


rule template_sensitivity:
    output:
        sensitivity=f"{ANALYSIS_DIR}/template_sensitivity.csv",
        ranks=f"{ANALYSIS_DIR}/rank_stability.csv",
    input:
        "results/leaderboard.csv",
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/analysis/template_sensitivity.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/template_sensitivity.py"


rule significance:
    output:
        templates=f"{ANALYSIS_DIR}/significance_templates.csv",
        models=f"{ANALYSIS_DIR}/significance_models.csv",
    input:
        raw=all_raw(),
        scores=all_scores(),
    params:
        settings={k: ANALYSIS[k] for k in ("seed", "samples", "alpha")},
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/analysis/significance.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/significance.py"


rule parse_failures:
    output:
        rates=f"{ANALYSIS_DIR}/parse_failures.csv",
        reasons=f"{ANALYSIS_DIR}/parse_failure_reasons.csv",
    input:
        raw=all_raw(),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/analysis/parse_failures.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/parse_failures.py"


rule item_difficulty:
    output:
        per_item=f"{ANALYSIS_DIR}/item_difficulty.csv",
        buckets=f"{ANALYSIS_DIR}/difficulty_buckets.csv",
        patterns=f"{ANALYSIS_DIR}/difficulty_patterns.csv",
        gaps=f"{ANALYSIS_DIR}/crosslingual_gaps.csv",
        gap_items=f"{ANALYSIS_DIR}/crosslingual_items.csv",
    input:
        raw=all_raw(),
        # item texts for the example columns
        prepared=all_prepared(),
    params:
        pivot=ANALYSIS["pivot_language"],
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/analysis/item_difficulty.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/item_difficulty.py"


rule plots:
    output:
        figure_targets(GRID.tasks),
    input:
        leaderboard="results/leaderboard.csv",
        rates=rules.parse_failures.output.rates,
    params:
        tasks=sorted(GRID.tasks),
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/analysis/plots.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/plots.py"


rule report:
    output:
        "results/report.html",
    input:
        leaderboard="results/leaderboard.csv",
        sensitivity=rules.template_sensitivity.output.sensitivity,
        rank_stability=rules.template_sensitivity.output.ranks,
        significance_templates=rules.significance.output.templates,
        significance_models=rules.significance.output.models,
        parse_failures=rules.parse_failures.output.rates,
        parse_failure_reasons=rules.parse_failures.output.reasons,
        difficulty_buckets=rules.item_difficulty.output.buckets,
        difficulty_patterns=rules.item_difficulty.output.patterns,
        crosslingual_gaps=rules.item_difficulty.output.gaps,
        crosslingual_items=rules.item_difficulty.output.gap_items,
        plots=figure_targets(GRID.tasks),
        variation=variation_section,
    params:
        settings=ANALYSIS,
    threads: CPU_THREADS
    resources:
        **CPU_RESOURCES,
    log:
        "results/logs/analysis/report.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/report.py"
