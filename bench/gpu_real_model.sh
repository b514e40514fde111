#!/usr/bin/env bash
# The builtin real model (SmolLM2-135M-Instruct) on a CUDA GPU against a CPU reference, on the bundled grid
# (bench/gpu_real_model.py): the workflow's conversion of the GGUF file, then every generation job of the grid's
# entries of the model in float32 and in bfloat16 on the GPU, each compared with the CPU's float32 run.
#   here (the project's .venv, after make run):
#     .venv/bin/python bench/gpu_real_model.py plan --out PLAN
#     .venv/bin/python bench/gpu_real_model.py run --plan PLAN --model results/models/smollm2-135m-instruct \
#         --device cpu --dtype float32 --threads 2 --out PLAN/cpu_float32.jsonl
#   on the GPU machine (torch, transformers, accelerate; the gguf package, pure Python, for the conversion):
#     bash bench/gpu_real_model.sh SmolLM2-135M-Instruct.Q4_1.gguf PLAN PLAN/cpu_float32.jsonl OUT [DEVICE]
# Writes OUT/{cuda_float32,cuda_bfloat16}.jsonl and OUT/compare_{float32,bfloat16}.json; exits 1 where float32
# differs from the reference (an argmax, a reply, a log-likelihood by more than 1e-4). DEVICE: cuda (cpu: a check).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
gguf_file="$1" plan="$2" reference="$3" out="$4" device="${5:-cuda}"
mkdir -p "$out"
export PYTHONPATH="$here/../workflow${PYTHONPATH:+:$PYTHONPATH}"
model="$(mktemp -d)/smollm2-135m-instruct"
trap 'rm -rf "$(dirname "$model")"' EXIT
"$python" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__,
'device', torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu')"
sha256sum "$gguf_file"
"$python" "$here/gpu_real_model.py" convert "$gguf_file" "$model" || exit 1
sha256sum "$model/model.safetensors"
status=0
for dtype in float32 bfloat16; do
    "$python" "$here/gpu_real_model.py" run --plan "$plan" --model "$model" --device "$device" --dtype "$dtype" \
        --out "$out/${device}_$dtype.jsonl" || { status=1; continue; }
    "$python" "$here/gpu_real_model.py" compare "$out/${device}_$dtype.jsonl" "$reference" \
        | tee "$out/compare_$dtype.json"
    rc=$?
    echo "compare $dtype against the CPU's float32: exit $rc"
    [ "$dtype" = float32 ] && [ "$rc" -ne 0 ] && status=1
done
exit $status
