#!/usr/bin/env bash
# Every CPU figure of bench/RESULTS.md, with public tools only (python, the two virtual environments).
#   bash bench/run_all.sh [RUNS]        # RUNS whole-process repeats per side (default 3)
# Needs the project's environment (make test sets up .venv) and lm-eval's (bash bench/setup_lmeval.sh).
# Takes long on 2 cores (about an hour): lm-eval's text-choice run alone is minutes per repeat.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-3}"
PY=.venv/bin/python
LM=bench/.venv-lmeval/bin/python
M=bench/data/llama30m
OUT=bench/out
mkdir -p "$OUT"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

$PY bench/make_data.py
bash bench/setup_lmeval.sh >/dev/null

for data in belebele200 belebele200-unique; do
  for choices in texts letters; do
    echo "== MC log-likelihood: $data, $choices (whole process, ours vs lm-eval, $RUNS runs each, alternately)"
    $PY bench/timing.py --runs "$RUNS" --warmup 0 --name babeleval --name lm-eval \
      "$PY bench/mc_loglikelihood.py --model $M --data bench/data/$data.jsonl --choices $choices --out $OUT/ours-$data-$choices.jsonl" \
      "$LM bench/lmeval_mc.py --model $M --data bench/data/$data.jsonl --choices $choices --out $OUT/lmeval-$data-$choices.jsonl" \
      | tee "$OUT/timing-$data-$choices.json"
    $PY bench/compare_mc.py "$OUT/ours-$data-$choices.jsonl" "$OUT/lmeval-$data-$choices.jsonl"
  done
done

echo "== the fixed cost, stage by stage"
$PY bench/startup.py --model $M

for choices in texts letters; do
  echo "== floor: one forward pass over the unique tokens ($choices)"
  $PY bench/mc_floor.py --model $M --data bench/data/belebele200.jsonl --choices $choices --repeats "$RUNS"
done

echo "== linear layers: oneDNN against torch's matmul (in process: products, scoring, generation)"
$PY bench/linear_kernels.py --model $M --data bench/data/belebele200.jsonl --repeats "$RUNS"

echo "== generation: hf backend vs model.generate in one batch (in process)"
$PY bench/generation.py --model $M --data bench/data/belebele200.jsonl --repeats "$RUNS"
echo "== generation: hf backend vs lm-eval generate_until (whole process)"
$PY bench/timing.py --runs "$RUNS" --warmup 0 --name babeleval --name lm-eval \
  "$PY bench/generation.py --model $M --data bench/data/belebele200.jsonl --mode backend --repeats 1" \
  "$LM bench/lmeval_generate.py --model $M --data bench/data/belebele200.jsonl --repeats 1"
$PY bench/generation.py --model $M --data bench/data/belebele200.jsonl --mode backend --repeats "$RUNS"
$LM bench/lmeval_generate.py --model $M --data bench/data/belebele200.jsonl --repeats "$RUNS"

echo "== pipeline overhead"
$PY bench/pipeline_overhead.py run --cores 1
$PY bench/pipeline_overhead.py dryrun --runs "$RUNS"
$PY bench/cpu_side.py --languages 12
