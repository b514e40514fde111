"""How long planning an lm-eval task entry takes, with lm-eval's index built (a fresh cache) and read (the cache
kept): each in a fresh process, side by side in one run. Prints the times; asserts nothing.

    .venv/bin/python bench/lmeval_planning.py [REPEATS]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

PLAN = ("from babeleval.tasks import lmeval_catalogue as c\n"
        "c.plan('global_piqa_nonparallel_cloze', ['jpn_Jpan', 'hin_Deva'], 'bench')\n")


def timed(cache: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", PLAN], check=True, env={"XDG_CACHE_HOME": cache, "PATH": ""},
                   capture_output=True)
    return time.perf_counter() - start


def main(repeats: int) -> None:
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            cold = timed(cache)  # builds lm-eval's index and keeps it
            warm = timed(cache)  # reads it
        print(f"plan in a fresh process: index built {cold:.1f} s, index read {warm:.1f} s, ratio {cold / warm:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
