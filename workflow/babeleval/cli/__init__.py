"""The command-line tools, one way to call them all: ``python -m babeleval <command> [options]`` (or ``babeleval
<command>`` where the package's scripts are on the PATH).

=============  ===========================================================================================
command        what it does
=============  ===========================================================================================
``show``       the exact prompts of a (task, language, template), or its resolved record (``--record``)
``parse``      an answer parser run over a file of model outputs
``search``     a budgeted search for a base template's best and worst variant
``compare``    two runs side by side from their per-item outputs: differences, intervals, paired tests
``dvc-plots``  the page template that makes ``dvc plots`` work offline
``estimate``   a variant set's score distribution (mean, quantiles, best, worst) from a share of its cells
``cache``      a model's cached answers after its server changed: ``refresh`` (ask again) or ``keep``
``plan``       before a run: what each comparison can detect (power, MDE) and what each model will cost
=============  ===========================================================================================
"""

from __future__ import annotations

import importlib
import sys

# command -> its module in this package (each has main(argv) -> exit status)
COMMANDS = {"show": "show", "parse": "parse", "search": "search", "compare": "compare", "dvc-plots": "dvc_plots",
            "estimate": "estimate", "cache": "cache", "plan": "plan"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        given = f"unknown command '{argv[0]}'; " if argv and not argv[0].startswith("-") else ""
        print(f"usage: python -m babeleval <command> [options]\n{given}commands: {', '.join(COMMANDS)} "
              "(python -m babeleval <command> --help for each)", file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    command = importlib.import_module(f"{__name__}.{COMMANDS[argv[0]]}")
    return command.main(argv[1:])
