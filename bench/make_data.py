"""Build the benchmark's inputs, deterministically from a seed, under bench/data/ (ignored by git).

- ``llama30m/``: a random-weight Llama with 8 layers and hidden size 512 (about 30M parameters with
  its 8192-row embedding and output matrices), and a byte-level BPE tokenizer trained on the bundled
  Belebele sample, the way babeleval.generate.tiny_model builds the pipeline's tiny model; saved with
  ``save_pretrained`` so both harnesses load it through ``from_pretrained``.
- ``belebele200.jsonl``: 200 items in Belebele's official row format, recombined from the bundled
  sample (4 languages): sentences of a passage reordered, sometimes extended with sentences of another
  passage of the same language, answers shuffled; each passage is asked the questions its source
  passage was asked (2, consecutive rows), as in Belebele, where 900 questions share 488 passages.
  No download.
- ``belebele200-unique.jsonl``: the same recipe with one question per passage, so that no two items
  share a context: the harder case for a shared-prefix scorer.

    python bench/make_data.py [--out bench/data] [--items 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "samples" / "belebele"
sys.path.insert(0, str(ROOT / "workflow"))

MODEL = dict(vocab_size=8192, hidden_size=512, intermediate_size=1024, num_hidden_layers=8,
             num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=2048)
SENTENCE_END = re.compile(r"(?<=[.!?。।])\s*")


def build_model(out: Path, seed: int) -> int:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from babeleval.generate import tiny_model as tiny

    tokenizer = tiny.train_tokenizer(tiny.corpus(sorted(SAMPLE.glob("*.jsonl"))), MODEL["vocab_size"])
    assert len(tokenizer) <= MODEL["vocab_size"], len(tokenizer)
    config = LlamaConfig(**MODEL, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    AutoTokenizer.from_pretrained(out)
    AutoModelForCausalLM.from_pretrained(out)
    return sum(p.numel() for p in model.parameters())


def sentences(text: str) -> list[str]:
    return [s for s in SENTENCE_END.split(text.strip()) if s]


def join(parts: list[str], language: str) -> str:
    return ("" if language == "jpn_Jpan" else " ").join(parts)


def make_items(n: int, seed: int, layout: str = "belebele") -> list[dict]:
    """``n`` items; ``belebele``: each new passage carries all questions of the passage it was made from
    (2 in the bundled sample; the real test set asks 900 questions about 488 passages), consecutively;
    ``unique``: every item has a passage of its own (no context shared between items)."""
    rng = random.Random(seed)
    by_link: dict[tuple[str, str], list[dict]] = {}
    for path in sorted(SAMPLE.glob("*.jsonl")):
        for line in path.open(encoding="utf-8"):
            if line.strip():
                row = json.loads(line)
                by_link.setdefault((path.stem, row["link"]), []).append(row)
    languages = sorted({language for language, _ in by_link})
    items: list[dict] = []
    number = 0
    while len(items) < n:
        language = languages[number % len(languages)]
        links = sorted(link for lang, link in by_link if lang == language)
        questions = by_link[(language, rng.choice(links))]
        parts = sentences(questions[0]["flores_passage"])
        rng.shuffle(parts)
        if rng.random() < 0.4:  # longer passages too, as in the real data
            other = sentences(by_link[(language, rng.choice(links))][0]["flores_passage"])
            parts += other[: rng.randint(1, max(1, len(other) // 2))]
        passage = join(parts, language)
        asked = questions if layout == "belebele" else [rng.choice(questions)]
        for q_number, base in enumerate(asked, start=1):
            answers = [base[f"mc_answer{k}"] for k in range(1, 5)]
            order = list(range(4))
            rng.shuffle(order)
            correct = int(base["correct_answer_num"]) - 1
            item = {"link": f"https://example.org/babeleval-bench/{number:03d}", "question_number": q_number,
                    "flores_passage": passage, "question": base["question"]}
            item.update({f"mc_answer{k + 1}": answers[j] for k, j in enumerate(order)})
            item.update({"correct_answer_num": str(order.index(correct) + 1), "dialect": language,
                         "ds": base.get("ds", "")})
            items.append(item)
        number += 1
    return items[:n]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "bench" / "data"))
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="rebuild even if the files exist")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model_dir = out / "llama30m"
    if args.force or not (model_dir / "config.json").is_file():
        params = build_model(model_dir, args.seed)
        print(f"built {model_dir}: {params / 1e6:.1f}M parameters")
    for layout, suffix in (("belebele", ""), ("unique", "-unique")):
        items_file = out / f"belebele{args.items}{suffix}.jsonl"
        if args.force or not items_file.is_file():
            with open(items_file, "w", encoding="utf-8") as handle:
                for item in make_items(args.items, args.seed, layout):
                    handle.write(json.dumps(item, ensure_ascii=False) + "\n")
            print(f"wrote {items_file}: {args.items} items ({layout} layout)")

if __name__ == "__main__":
    main()
