"""Our side of the real-model comparison with lm-eval: the workflow's generation job on rendered prompt files.

    .venv/bin/python bench/replay_prompts.py --model DIR --prompts FILE.jsonl [FILE.jsonl ...] --out OUT.jsonl \
        [--chat] [--max-new-tokens N --stop JSON_LIST] [--batch-size 8] [--threads N]

Without ``--max-new-tokens``: each request's choices are scored by log-likelihood (``mode: loglikelihood``);
with it: greedy generation up to N tokens or a stop string. The files are the workflow's own
(``results/prompts/<task>/<language>/<template>.jsonl``), answered by ``babeleval.generate.job.run`` with the cache
off, exactly as a generation job answers them; ``--chat`` renders each prompt through the model's chat template,
as a ``chat: true`` entry does. Writes one line per request: id, gold, log-likelihoods or the response, and the
text the model saw. Timings go to standard error.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

STARTED = time.perf_counter()

from pathlib import Path  # noqa: E402

from replay_args import add_replay_arguments  # noqa: E402  (this folder is on the path of a script run from it)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_replay_arguments(parser)
    args = parser.parse_args(argv)

    from babeleval.core import cpu_threads
    from babeleval.core.jsonl import read_jsonl, write_jsonl
    from babeleval.core.record_fields import RENDERED_PROMPT
    from babeleval.generate.backends import model_config
    from babeleval.generate.job import JobFiles, JobModel, run

    cpu_threads.grant(args.threads)
    config = model_config({"backend": "hf", "model": args.model, "dtype": "float32", "device": "cpu",
                           "batch_size": args.batch_size, "chat": args.chat})
    if args.max_new_tokens is None:
        settings = {"mode": "loglikelihood"}
    else:
        settings = {"mode": "generate", "do_sample": False, "max_new_tokens": args.max_new_tokens, "stop": args.stop}
    files = {str(k): path for k, path in enumerate(args.prompts)}
    with tempfile.TemporaryDirectory() as scratch:
        outputs = {k: str(Path(scratch) / f"{k}.jsonl") for k in files}
        run(JobModel(config, args.model), settings["mode"], settings, JobFiles(files, outputs, None))
        computed = time.perf_counter()
        rows = []
        for k in files:
            for record in read_jsonl(outputs[k]):
                row = {"id": record["id"], "gold": record.get("answer")}
                if settings["mode"] == "loglikelihood":
                    row["logprobs"] = record["loglikelihoods"]
                else:
                    row["response"] = record["response"]
                row["prompt_text"] = record.get(RENDERED_PROMPT) or record["prompt"]
                rows.append(row)
    write_jsonl(args.out, rows)
    print(f"ours: {len(rows)} requests, {settings['mode']}; computed at {computed - STARTED:.2f} s, "
          f"total {time.perf_counter() - STARTED:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
