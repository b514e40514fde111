"""The fixed cost of a log-likelihood run, stage by stage: what a process spends before it scores anything.

    python bench/startup.py --model DIR

Imports and loads in the order the hf backend does (torch, transformers, babeleval's hf module, the model class
transformers picks for the model's config, the tokenizer, the weights), then builds the backend on what is
already loaded, and
prints one JSON line with each stage's CPU seconds (user + system, this process) and wall seconds. Run it in a
fresh process: a second import costs nothing. ``torch._dynamo`` is timed on its own because transformers'
modeling code imports it (through ``torch.compiler.disable``) whether or not anything is compiled.
``--collector paused`` (the default) runs the stages with Python's cyclic garbage collector paused, freezes what
the imports made once babeleval's hf module is imported, and collects once at the end, as ``load_backend`` does
(``babeleval.core.gc_pause``); ``--collector on`` leaves it on throughout.
"""

from __future__ import annotations

import argparse
from contextlib import nullcontext
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--collector", choices=("paused", "on"), default="paused")
    args = parser.parse_args(argv)
    from babeleval.core.gc_pause import collector_paused, imports_done  # the standard library only: no torch yet

    stages: dict[str, dict[str, float]] = {}
    last = (time.process_time(), time.perf_counter())

    def done(stage: str) -> None:
        nonlocal last
        now = (time.process_time(), time.perf_counter())
        stages[stage] = {"cpu_s": round(now[0] - last[0], 3), "wall_s": round(now[1] - last[1], 3)}
        last = now

    with collector_paused() if args.collector == "paused" else nullcontext():
        import torch
        done("import torch")
        import torch._dynamo  # noqa: F401
        done("import torch._dynamo")
        import transformers
        done("import transformers")
        from babeleval.generate.backends.config import HFConfig
        from babeleval.generate.backends.hf import HFBackend
        done("import babeleval's hf backend")
        if args.collector == "paused":
            imports_done()
            done("freeze what the imports made (imports_done, as the hf loader marks it)")
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
        model_class = transformers.models.auto.modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING[
            type(AutoConfig.from_pretrained(args.model))]
        done("import the model's code")
        AutoTokenizer.from_pretrained(args.model)
        done("load the tokenizer")
        AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
        done("load the weights")
        HFBackend(HFConfig(model=args.model, dtype="float32", device="cpu"), args.model)
        done("build the backend (everything imported and cached)")
    if args.collector == "paused":
        done("collect once and freeze what survives (the pause's end)")
    total = {key: round(sum(s[key] for s in stages.values()), 3) for key in ("cpu_s", "wall_s")}
    print(json.dumps({"model_class": model_class.__name__, "stages": stages, "total": total}))


if __name__ == "__main__":
    main()
