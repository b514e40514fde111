"""Names given with ``snakemake --resources`` that no job of the run holds, said at start-up.

Snakemake accepts any name there and ignores one no rule asks for: ``--resources api_openrouter=8`` beside jobs that
hold ``api_openrouter_ai`` limits nothing, silently. The run's own names (its jobs' resources, and the caps the
workflow reads: ``mem_mb``) are compared with the given ones, and each unused one is named with the closest used
name.
"""

from __future__ import annotations

import difflib
from typing import Iterable

# Snakemake's own entries in its global resources, and the caps the workflow reads from them (rules/common.smk)
INTERNAL = frozenset({"_cores", "_nodes", "tmpdir"})
READ_AS_CAPS = frozenset({"mem_mb"})


def unused_resources(given: Iterable[str], used: Iterable[str]) -> list[str]:
    """One warning line per given name that nothing uses, with the name it probably means."""
    used = sorted((set(used) | READ_AS_CAPS) - INTERNAL)
    lines = []
    for name in sorted(set(given) - INTERNAL - set(used)):
        close = difflib.get_close_matches(name, used, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}? " if close else ""
        lines.append(f"warning: --resources {name}: no job of this run holds '{name}', so it limits nothing "
                     f"({hint}the resources its jobs hold: {', '.join(used)})")
    return lines
