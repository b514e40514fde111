# Builtin models: built offline from a config, so the default grid needs no model hub.
# Their weights have a fixed seed of their own: params.yaml's `seed` (few-shot sampling, shuffling, decoding)
# can change, `-S seed=7` included, without changing the model being evaluated.

BUILTIN_MODEL_SEED = 0


rule build_tiny_model:
    output:
        directory(paths.BUILT_MODEL),
    input:
        # the tokenizer is trained on the bundled Belebele sample: every script it uses encodes well
        data=sorted(str(p) for p in Path(paths.TINY_MODEL_CORPUS).glob("*.jsonl")),
    params:
        seed=BUILTIN_MODEL_SEED,
    resources:
        **BUILD_MODEL_RESOURCES,
    log:
        paths.log("build_tiny_model", "{builtin}"),
    conda:
        "../../envs/gpu.yaml"
    script:
        "../scripts/build_tiny_model.py"
