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
        "../scripts/variation_analysis.py"


# One job per (model, task, family) answers all of a family's log-likelihood variants in one backend call:
# the hf scorer stores the passage and question the variants share once, and the model loads once. Each
# variant's own generation job (generate.smk, which waits for this one) then reads its answers from the
# response cache, so every variant keeps its own targets and an unchanged one is never recomputed.
from babeleval.prompts.variants import shared_prefix_families, shared_prefix_pairs


# tasks with a shared-prefix rule: their variants' generation jobs wait for it (shared_prefix_input, common.smk)
SHARED_PREFIX_TASKS = {t for t in GRID.tasks if shared_prefix_families(GRID, t)}

for _task in GRID.tasks.values():
    _families = shared_prefix_families(GRID, _task.name)
    if not _families:
        continue

    rule:
        name:
            f"shared_prefix_{_task.name}"
        output:
            usage=f"results/usage/{{model}}/{_task.name}/shared_prefix/{{family}}.json",
        input:
            prompts=lambda w, task=_task, families=_families: [
                path for _, path in shared_prefix_pairs(task, families[w.family], PROMPTS)],
            model=model_input,
        wildcard_constraints:
            family=alternatives(_families),
            model=alternatives([m for m in GRID.models if get_backend(GRID.models[m].backend).shared_prefix]),
        params:
            labels=lambda w, task=_task, families=_families: [
                label for label, _ in shared_prefix_pairs(task, families[w.family], PROMPTS)],
            settings=lambda w, task=_task, families=_families: generation_settings(
                task.name, families[w.family][0], w.model),
            model_entry=lambda w: config["models"][w.model],  # as params.yaml gives it (the job types it)
            model_path=lambda w: model_path(w.model),
            cache=lambda w: f"results/cache/{w.model}.sqlite",
        resources:
            **generation_resources(),  # the model's backend's: gpu=1 for hf (common.smk)
        log:
            f"results/logs/shared_prefix/{{model}}/{_task.name}/{{family}}.log",
        conda:
            generation_env
        script:
            "../scripts/shared_prefix.py"
