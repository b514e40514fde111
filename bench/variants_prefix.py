"""k prompt variants scored as k separate runs (one job per variant, as the workflow runs them today)
against one run holding all k variants' requests, where the hf backend's token-tree scorer stores the
prefix the variants share (the passage, the question) once.

    .venv/bin/python bench/variants_prefix.py --variants 8 --repeats 3
    .venv/bin/python bench/variants_prefix.py --model /path/to/model --device cuda --batch-size 32

Variants are choice-order and enumerator variants of prompts/belebele/formatspread.yaml on the bundled
Belebele sample (or any --data directory of Belebele JSONL files). Without --model, the builtin tiny
random Llama is built in a temporary directory (seconds; at the default size its timings show the
bookkeeping, not a real model's compute: --hidden 512 --layers 8 makes compute dominate). Prints wall time per setting and checks that both settings give the same log-likelihoods.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "workflow"))

from babeleval.generate.backends.base import LoglikelihoodRequest  # noqa: E402
from babeleval.prompts.render import build_requests  # noqa: E402
from babeleval.tasks import get_task  # noqa: E402
from babeleval.prompts.templates import load_template  # noqa: E402
from babeleval.prompts.variants import variant_name  # noqa: E402

# choice order and enumerator only: every variant shares the passage and question text
ORDERS = ["orig", "rev", "p1", "p2", "p3", "p4", "p5", "p6"]
ENUMS = ["upper", "num"]


def variant_names(k: int) -> list[str]:
    names = []
    for enum in ENUMS:
        for order in ORDERS:
            settings = {key: value for key, value in (("enum", enum), ("order", order))
                        if value not in ("upper", "orig")}
            names.append(variant_name("formatspread", settings))
    return names[:k]


def requests_for(names: list[str], data: Path, languages: list[str]) -> dict[str, list[LoglikelihoodRequest]]:
    task = get_task("belebele")
    out = {}
    for name in names:
        template = load_template("belebele", name, ROOT)
        rows = []
        for language in languages:
            items = task.load({"kind": "local", "path": str(data)}, language)
            rows += build_requests(template, items, [], fewshot=template.fewshot, seed=1)
        out[name] = [LoglikelihoodRequest(r["prompt"], tuple(r["continuations"])) for r in rows]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default=None, help="a local model directory (default: the builtin tiny Llama)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--data", default=str(ROOT / "data/samples/belebele"))
    parser.add_argument("--hidden", type=int, default=64, help="width of the random model built without --model")
    parser.add_argument("--layers", type=int, default=2, help="depth of the random model built without --model")
    parser.add_argument("--languages", nargs="*", default=None, help="default: every file in --data")
    args = parser.parse_args()

    from babeleval.generate.backends.config import HFConfig
    from babeleval.generate.backends.hf import HFBackend

    data = Path(args.data)
    languages = args.languages or sorted(p.stem for p in data.glob("*.jsonl"))
    model = args.model
    if model is None:
        from babeleval.generate import tiny_model as tiny

        model = str(tiny.build(Path(tempfile.mkdtemp()) / "random-llama", sorted(data.glob("*.jsonl")),
                               hidden_size=args.hidden, layers=args.layers, heads=max(4, args.hidden // 64)))
    backend = HFBackend(HFConfig(model=model, device=args.device, batch_size=args.batch_size, dtype="float32"), model)
    names = variant_names(args.variants)
    by_variant = requests_for(names, data, languages)
    n = sum(len(r) for r in by_variant.values())
    print(f"{len(names)} variants x {len(languages)} languages: {n} requests, model {model}, device {args.device}")

    backend.loglikelihood(by_variant[names[0]][:4])  # warm-up
    timings = {"separate": [], "together": []}
    for _ in range(args.repeats):
        started = time.perf_counter()
        separate = [res for name in names for res in backend.loglikelihood(by_variant[name])]
        timings["separate"].append(time.perf_counter() - started)
        started = time.perf_counter()
        together = backend.loglikelihood([req for name in names for req in by_variant[name]])
        timings["together"].append(time.perf_counter() - started)
    worst = max(abs(a - b) for s, t in zip(separate, together) for a, b in zip(s.logprobs, t.logprobs))
    best = {key: min(values) for key, values in timings.items()}
    for key, value in best.items():
        print(f"{key:>9}: {value:7.3f} s (best of {args.repeats}), {n / value:8.1f} requests/s")
    print(f"speed-up of one run over {len(names)} separate runs: {best['separate'] / best['together']:.2f}x; "
          f"largest log-likelihood difference {worst:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
