#!/usr/bin/env bash
# The real builtin model (SmolLM2-135M-Instruct, float32) against lm-eval 0.4.13, side by side on the bundled
# Belebele items (24 a language, English, Japanese, Hindi), on the prompts the workflow renders:
#   - the paper template's log-likelihoods (the base model): every per-choice log-likelihood, argmax, accuracy;
#   - the chat instruction (the chat model, through its chat template): the prompt text and the greedy reply;
#   - whole processes, in turn, for each (bench/timing.py).
#   bash bench/real_model.sh [OUT_DIR] [RUNS]
# Needs the project's .venv (make test) and lm-eval's (bash bench/setup_lmeval.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:-bench/out/real_model}")"
runs="${2:-3}"
mkdir -p "$out"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# the workflow in a scratch copy, with the default grid's two entries of the model on Belebele's whole sample
mkdir -p "$scratch/data"
cp -r Snakefile workflow prompts envs "$scratch/"
cp -r data/samples "$scratch/data/"
.venv/bin/python - "$scratch/params.yaml" <<'PY'
import sys, yaml
params = yaml.safe_load(open("params.yaml", encoding="utf-8"))
params["tasks"] = {"belebele": {**params["tasks"]["belebele"], "limit": None, "templates": ["paper", "instruct"]}}
for entry in params["models"].values():
    entry["tasks"] = {"belebele": entry["tasks"]["belebele"]}
yaml.safe_dump(params, open(sys.argv[1], "w", encoding="utf-8"), sort_keys=False)
PY
langs=(eng_Latn jpn_Jpan hin_Deva)
paper=() instruct=()
for lang in "${langs[@]}"; do
    paper+=("$scratch/results/prompts/belebele/$lang/paper.jsonl")
    instruct+=("$scratch/results/prompts/belebele/$lang/instruct.jsonl")
done
(cd "$scratch" && "$OLDPWD/.venv/bin/snakemake" results/models/smollm2-135m-instruct \
    "${paper[@]#"$scratch/"}" "${instruct[@]#"$scratch/"}" --cores 2 --resources gpu=1 --quiet)
model="$scratch/results/models/smollm2-135m-instruct"
ours=(.venv/bin/python bench/replay_prompts.py --model "$model" --threads 2)
theirs=(bench/.venv-lmeval/bin/python bench/lmeval_replay_prompts.py --model "$model" --threads 2)
# the instruct template's own generation settings: at most 10 new tokens, stop at a newline
instruct_settings=(--chat --max-new-tokens 10 --stop '["\n"]')

"${ours[@]}" --prompts "${paper[@]}" --out "$out/ours_paper.jsonl"
"${theirs[@]}" --prompts "${paper[@]}" --out "$out/lmeval_paper.jsonl"
"${ours[@]}" --prompts "${instruct[@]}" "${instruct_settings[@]}" --out "$out/ours_instruct.jsonl"
"${theirs[@]}" --prompts "${instruct[@]}" "${instruct_settings[@]}" --out "$out/lmeval_instruct.jsonl"
echo "paper (log-likelihood):"
.venv/bin/python bench/compare_replay.py "$out/ours_paper.jsonl" "$out/lmeval_paper.jsonl" || true
echo "instruct (chat, generated):"
.venv/bin/python bench/compare_replay.py "$out/ours_instruct.jsonl" "$out/lmeval_instruct.jsonl" || true

q() { printf '%q ' "$@"; }
echo "whole processes, paper:"
.venv/bin/python bench/timing.py --runs "$runs" --name ours "$(q "${ours[@]}" --prompts "${paper[@]}" --out "$out/t.jsonl")" \
    --name lm-eval "$(q "${theirs[@]}" --prompts "${paper[@]}" --out "$out/t.jsonl")" | tee "$out/timing_paper.json"
echo "whole processes, instruct:"
.venv/bin/python bench/timing.py --runs "$runs" \
    --name ours "$(q "${ours[@]}" --prompts "${instruct[@]}" "${instruct_settings[@]}" --out "$out/t.jsonl")" \
    --name lm-eval "$(q "${theirs[@]}" --prompts "${instruct[@]}" "${instruct_settings[@]}" --out "$out/t.jsonl")" \
    | tee "$out/timing_instruct.json"
