#!/usr/bin/env bash
# Snakemake runs this once inside the new environment, from the workflow's working directory (the
# repository root). The dependencies come from the YAML file beside it; this adds the package
# itself. An editable install: the environment follows the checked-out code.
set -euo pipefail
python -m pip install --quiet --no-deps -e .
