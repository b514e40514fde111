"""``python -m babeleval <command>``: the command-line tools (``babeleval.cli``)."""

import sys

from .cli import main

sys.exit(main())
