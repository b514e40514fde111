"""An HTML template that makes ``dvc plots show`` / ``dvc plots diff`` pages work offline.

DVC's default page loads Vega, Vega-Lite and vega-embed from a CDN, so with no network it renders a
blank page. This writes a page template with those three libraries inlined, taken from the copies
Snakemake ships for its own report (no download), and without DVC's ``{scripts}`` placeholder (where
DVC would put the CDN tags)::

    python -m babeleval dvc-plots                                      # writes .dvc/tmp/offline_plots.html
    dvc config --local plots.html_template tmp/offline_plots.html      # every `dvc plots` page, from now on
    dvc plots diff baseline terse-instruct                             # -> dvc_plots/index.html, offline
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core import paths
from ..core.errors import BabelevalError

LIBRARIES = ("vega/vega.js", "vega-lite/vega-lite.js", "vega-embed/vega-embed.js")
PAGE = """<!DOCTYPE html>
<html>
<head>
    {{refresh_tag}}
    <meta charset="utf-8">
    <title>DVC Plot</title>
{scripts}
    <style>
        body {{ font-family: system-ui, sans-serif; }}
        table {{ border-spacing: 15px; }}
    </style>
</head>
<body>
    {{plot_divs}}
</body>
</html>
"""


def vega_assets() -> Path:
    """The folder of Snakemake's bundled Vega libraries."""
    import snakemake

    folder = Path(snakemake.__file__).parent / "assets" / "data"
    missing = [name for name in LIBRARIES if not (folder / name).is_file()]
    if missing:
        raise BabelevalError(f"{folder}: Snakemake's bundled {', '.join(missing)} not found (a Snakemake "
                             "installation without its report assets: reinstall snakemake)")
    return folder


def page() -> str:
    folder = vega_assets()
    # "</script" inside a library would end the inline element early
    scripts = "\n".join("<script>\n" + (folder / name).read_text(encoding="utf-8").replace("</script", "<\\/script")
                        + "\n</script>" for name in LIBRARIES)
    return PAGE.format(scripts=scripts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m babeleval dvc-plots", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=paths.OFFLINE_PLOTS_PAGE,
                        help=f"where to write the template (default {paths.OFFLINE_PLOTS_PAGE})")
    args = parser.parse_args(argv)
    try:
        text = page()
    except BabelevalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}; use it with `dvc plots diff --html-template {out} REV REV`, or for every page: "
          f"`dvc config --local plots.html_template {Path(*out.parts[1:]) if out.parts[0] == '.dvc' else out.resolve()}`")
    return 0

