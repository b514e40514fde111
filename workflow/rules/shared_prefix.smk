# One job per (model, task, base template) answers all of a variant set's log-likelihood variants in one backend
# call: the hf scorer stores the passage and question the variants share once, and the model loads once. Each
# variant's own generation job (generate.smk, which waits for this one) then reads its answers from the
# response cache, so every variant keeps its own targets and an unchanged one is never recomputed.

from babeleval.grid.variant_sets import (shared_prefix_members, shared_prefix_models, shared_prefix_pairs,
                                         shared_prefix_sets)

for _task in GRID.tasks.values():
    _sets = shared_prefix_sets(GRID, _task.name)
    if not _sets:
        continue

    rule:
        name:
            f"shared_prefix_{_task.name}"
        output:
            usage=paths.SHARED_PREFIX_USAGE.format(model="{model}", task=_task.name, base="{base}"),
        input:
            # the set's templates this model runs
            prompts=lambda w, task=_task: [path for _, path in shared_prefix_pairs(
                task, shared_prefix_members(GRID, w.model, task.name, w.base))],
            model=model_input,
        wildcard_constraints:
            base=alternatives(_sets),
            model=alternatives(shared_prefix_models(GRID)),
        params:
            labels=lambda w, task=_task: [label for label, _ in shared_prefix_pairs(
                task, shared_prefix_members(GRID, w.model, task.name, w.base))],
            settings=lambda w, task=_task: generation_settings(
                task.name, shared_prefix_members(GRID, w.model, task.name, w.base)[0], w.model),
            # a change to a model setting that changes outputs reruns the job; the job reads the whole entry from the
            # config, so a speed-only change (batch size) reruns nothing, as in generate.smk
            model_outputs=lambda w: grid_rules.model_outputs(GRID, w.model),
            model_path=lambda w: model_path(w.model),
            cache=lambda w: paths.CACHE.format(model=w.model),
        threads: generation_threads(_task.name)
        resources:
            **generation_resources(),  # the model's GPUs (common.smk)
            **generation_limits(_task.name),  # memory, time and CPUs of the task's generation jobs
        log:
            paths.log("shared_prefix", "{model}", _task.name, "{base}"),
        conda:
            generation_env
        script:
            "../scripts/shared_prefix.py"
