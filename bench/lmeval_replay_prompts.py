"""lm-evaluation-harness 0.4.13's side of the real-model comparison (run in its venv, bench/setup_lmeval.sh).

    bench/.venv-lmeval/bin/python bench/lmeval_replay_prompts.py --model DIR --prompts FILE.jsonl [...] \
        --out OUT.jsonl [--chat] [--max-new-tokens N --stop JSON_LIST] [--batch-size 8] [--threads N]

The same rendered prompt files as bench/replay_prompts.py, through lm-eval's ``HFLM`` (its ``--model hf``):
log-likelihood requests (context, continuation), as its evaluator sends a ``multiple_choice`` task's, or
``generate_until`` requests (greedy, ``max_gen_toks``, ``until`` the stop strings); ``--chat`` renders each
prompt as one user turn with ``HFLM.apply_chat_template``, what ``--apply_chat_template`` does. Same output format.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

STARTED = time.perf_counter()

from replay_args import add_replay_arguments  # noqa: E402  (this folder is on the path of a script run from it)


def read(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            rows += [json.loads(line) for line in handle if line.strip()]
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_replay_arguments(parser)
    args = parser.parse_args(argv)

    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    if args.threads:
        torch.set_num_threads(args.threads)
    lm = HFLM(pretrained=args.model, device="cpu", dtype="float32", batch_size=args.batch_size)
    rows = read(args.prompts)
    texts = [lm.apply_chat_template([{"role": "user", "content": row["prompt"].strip()}], add_generation_prompt=True)
             if args.chat else row["prompt"] for row in rows]
    out = []
    if args.max_new_tokens is None:
        instances = [Instance(request_type="loglikelihood", doc={}, arguments=(text, cont), idx=k,
                              metadata=("replay", i, 1))
                     for i, (row, text) in enumerate(zip(rows, texts)) for k, cont in enumerate(row["continuations"])]
        answers = iter(lm.loglikelihood(instances, disable_tqdm=True))
        for row, text in zip(rows, texts):
            out.append({"id": row["id"], "gold": row.get("answer"),
                        "logprobs": [next(answers)[0] for _ in row["continuations"]], "prompt_text": text})
    else:
        kwargs = {"until": list(args.stop), "max_gen_toks": args.max_new_tokens, "do_sample": False}
        instances = [Instance(request_type="generate_until", doc={}, arguments=(text, dict(kwargs)), idx=0,
                              metadata=("replay", i, 1)) for i, text in enumerate(texts)]
        for row, text, response in zip(rows, texts, lm.generate_until(instances, disable_tqdm=True)):
            out.append({"id": row["id"], "gold": row.get("answer"), "response": response, "prompt_text": text})
    with open(args.out, "w", encoding="utf-8") as handle:
        for row in out:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"lm-eval: {len(out)} requests; total {time.perf_counter() - STARTED:.2f} s, "
          f"threads {torch.get_num_threads()}", file=sys.stderr)


if __name__ == "__main__":
    main()
