# Prompt variation as a factor (docs/variations.md): spread over a template family's variants, variance
# decomposition, rank stability and the cross-lingual sensitivity test; tables, a figure and an HTML fragment
# the report includes. CPU only, from the raw per-item records.


rule variation_analysis:
    output:
        spread="results/tables/variation_spread.csv",
        axes="results/tables/variation_axes.csv",
        decomposition="results/tables/variation_decomposition.csv",
        ranks="results/tables/variation_ranks.csv",
        sensitivity="results/tables/variation_sensitivity.csv",
        figure="results/plots/variation.png",
        fragment="results/analysis/variation.html",
    input:
        raw=all_raw(),
    params:
        settings={**{k: ANALYSIS[k] for k in ("seed", "samples", "confidence")},
                  "permutations": config.get("analysis", {}).get("permutations", 10000),
                  "language_groups": config.get("analysis", {}).get("language_groups", {})},
    log:
        "results/logs/analysis/variation.log",
    conda:
        "../../envs/cpu.yaml"
    script:
        "../scripts/analysis_variation.py"
