"""The arguments both sides of the real-model comparison take (standard library only).

Imported by bench/replay_prompts.py (the project's generation job) and bench/lmeval_replay_prompts.py
(lm-evaluation-harness, in its own venv), so the two answer the same files with the same settings.
"""

from __future__ import annotations

import argparse
import json


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="a local model directory")
    parser.add_argument("--prompts", required=True, nargs="+", help="the workflow's rendered prompt files")
    parser.add_argument("--out", required=True)
    parser.add_argument("--chat", action="store_true", help="each prompt as one user turn, through the chat template")
    parser.add_argument("--max-new-tokens", type=int, default=None, help="generate (greedy); without it: score")
    parser.add_argument("--stop", type=json.loads, default=[], help='stop strings, a JSON list: \'["\\n"]\'')
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None)
