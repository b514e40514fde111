#!/usr/bin/env bash
# Create lm-evaluation-harness 0.4.13's virtual environment at bench/.venv-lmeval (ignored by git).
#   bash bench/setup_lmeval.sh [VENV_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-$here/.venv-lmeval}"
python="${PYTHON:-python3.11}"
if [ ! -x "$venv/bin/lm-eval" ] && [ ! -x "$venv/bin/lm_eval" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet "$(grep '^torch==' "$here/requirements-lmeval.txt")"
    "$venv/bin/python" -m pip install --quiet -r "$here/requirements-lmeval.txt"
fi
"$venv/bin/python" -c 'import lm_eval, torch, transformers; print("lm-eval", lm_eval.__version__ if hasattr(lm_eval, "__version__") else "?", "torch", torch.__version__, "transformers", transformers.__version__)'
