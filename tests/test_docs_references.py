"""Every pointer to a section of the documentation leads to a section that exists: ``<file>.md ("Section")`` and
``<file>.md, "Section"`` in comments and pages, and ``page.md#anchor`` links between pages; and the page `dvc plots
diff` writes is not something git would commit."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["params.yaml", "README.md", "data/raw/README.md", *map(str, Path(ROOT).glob("examples/*.yaml")),
           *map(str, Path(ROOT).glob("docs/*.md"))]
NAMED = re.compile(r"((?:docs/)?[\w/]*\.md)\s*(?:\(\s*\"([^\"]+)\"\s*\)|,\s*\"([^\"]+)\")")
NAMED_BEFORE = re.compile(r"\b(README)\s+\"([^\"]+)\"")
LINK = re.compile(r"\]\(([\w./-]+\.md)#([\w-]+)\)")


def headings(page: Path) -> list[str]:
    return [line.lstrip("#").strip() for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def test_every_named_section_exists():
    wrong = []
    for name in SOURCES:
        source = ROOT / name
        text = source.read_text(encoding="utf-8")
        for match in NAMED.finditer(text):
            page, section = match.group(1), match.group(2) or match.group(3)
            target = (ROOT / page) if (ROOT / page).exists() else (source.parent / page)
            if not target.exists() or section not in headings(target):
                wrong.append(f"{name}: {page} has no section {section!r}")
        for match in NAMED_BEFORE.finditer(text):
            if match.group(2) not in headings(ROOT / "README.md"):
                wrong.append(f"{name}: README.md has no section {match.group(2)!r}")
        for page, anchor in LINK.findall(text):
            target = source.parent / page
            if not target.exists() or anchor not in map(slug, headings(target)):
                wrong.append(f"{name}: {page}#{anchor} leads nowhere")
    assert wrong == []


def test_the_dvc_plots_page_is_not_committed(tmp_path):
    (tmp_path / "dvc_plots").mkdir()
    (tmp_path / "dvc_plots" / "index.html").write_text("<html></html>")
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "-q", "dvc_plots/index.html"], cwd=ROOT,
                             capture_output=True)
    assert ignored.returncode == 0, "dvc_plots/ is not in .gitignore: `git add -A` would commit the 2 MB page"
