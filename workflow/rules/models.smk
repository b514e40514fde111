# Builtin models: built offline from a config, so the default grid needs no model hub.


rule build_tiny_model:
    output:
        directory("results/models/{builtin}"),
    input:
        # the tokenizer is trained on the bundled Belebele sample: every script it uses encodes well
        data=sorted(str(p) for p in Path("data/samples/belebele").glob("*.jsonl")),
    params:
        seed=GRID.seed,
    resources:
        **BUILD_MODEL_RESOURCES,
    log:
        "results/logs/build_tiny_model/{builtin}.log",
    conda:
        "../../envs/gpu.yaml"
    script:
        "../scripts/build_tiny_model.py"
