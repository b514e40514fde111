"""The report at laptop widths, measured in headless Chromium: no sideways page scroll, tables scroll in their
own box, figures fit and keep their shape, text lines stay readable.

The report itself carries no script. The test loads a copy of it with a measuring script added at the end of
the body; the script writes what it measured into the DOM, which ``--dump-dom`` prints.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from analysis_data import IDS, outcomes_from_raw, report_tables, write_results
from browser import run_chromium

# the report drawn at full size and looked at in headless Chromium: about a minute
pytestmark = pytest.mark.slow

# FLORES-style codes across many scripts, and model names as long as real hub ids: the widest grid a paper shows
LANGUAGES = ["eng_Latn", "arb_Arab", "zho_Hans", "jpn_Jpan", "kor_Hang", "hin_Deva", "ben_Beng", "tam_Taml",
             "tel_Telu", "tha_Thai", "amh_Ethi", "heb_Hebr", "rus_Cyrl", "ell_Grek", "kat_Geor", "hye_Armn",
             "khm_Khmr", "mya_Mymr", "sin_Sinh", "urd_Arab", "pes_Arab", "guj_Gujr", "kan_Knda", "mal_Mlym",
             "ory_Orya", "pan_Guru", "npi_Deva", "lao_Laoo", "bod_Tibt", "ckb_Arab"]
MODELS = ["Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "Qwen2.5-72B-Instruct-GPTQ-Int4-longcontext-128k",
          "aya-expanse-32b", "gemma-2-27b-it"]
TEMPLATES = ["paper", "instruct", "instruct-in-language-with-worked-example"]
# a Thai answer has no spaces between words: the longest unbroken text a table cell gets
THAI_ANSWER = "คำตอบที่ถูกต้องคือตัวเลือกที่สองเพราะข้อความกล่าวไว้อย่างชัดเจนในย่อหน้าแรก" * 3

MEASURE = """<pre id="layout-measure"></pre><script>
window.addEventListener("load", () => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });  // the long table is measured too
  const vw = window.innerWidth;
  const scroller = el => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (["auto", "scroll"].includes(getComputedStyle(p).overflowX)) return p;
    }
    return null;
  };
  const ch = document.createElement("span");
  ch.style.cssText = "display:inline-block;width:1ch";
  const out = {viewport: vw, scroll_width: document.documentElement.scrollWidth, tables: [], images: [],
               widest_line_ch: 0};
  for (const t of document.querySelectorAll("table")) {
    const box = scroller(t);
    out.tables.push({id: t.id, width: Math.round(t.getBoundingClientRect().width),
                     container: Math.round(t.parentElement.clientWidth),
                     scroll_box_right: box ? Math.round(box.getBoundingClientRect().right) : null});
  }
  for (const img of document.querySelectorAll("img")) {
    const r = img.getBoundingClientRect();
    const box = scroller(img);
    // the shape from the content box: the border is not part of the picture
    out.images.push({width: r.width, natural: [img.naturalWidth, img.naturalHeight],
                     shown: [img.clientWidth, img.clientHeight], container: img.parentElement.clientWidth,
                     scroll_box_right: box ? Math.round(box.getBoundingClientRect().right) : null});
  }
  for (const p of document.querySelectorAll("body > p, li")) {
    p.appendChild(ch);
    out.widest_line_ch = Math.max(out.widest_line_ch, p.clientWidth / ch.getBoundingClientRect().width);
    ch.remove();
  }
  const first = document.getElementById("first-screen");
  out.first_screen_bottom = first ? Math.round(first.getBoundingClientRect().bottom) : null;
  const firstTable = document.getElementById("overall-table");
  out.first_table_right = firstTable ? Math.round(firstTable.getBoundingClientRect().right) : null;
  document.getElementById("layout-measure").textContent = JSON.stringify(out);
});
</script>"""


def measure(page: Path, width: int, height: int, workdir: Path) -> dict:
    """What the measuring script saw with the page loaded at ``width`` x ``height``."""
    copy = workdir / f"measured-{width}x{height}-{page.name}"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = run_chromium("--hide-scrollbars", f"--window-size={width},{height}", "--virtual-time-budget=5000",
                       "--dump-dom", copy.as_uri(), profile=workdir / "profile").stdout
    found = re.search(r'<pre id="layout-measure">(.*?)</pre>', dom, re.S)
    assert found and found.group(1), "the measuring script did not run"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def layout_problems(seen: dict, max_line_ch: float = 100, min_scale: float = 0.5) -> list[str]:
    """Everything that would make a reader scroll sideways, squint or read a distorted figure."""
    vw = seen["viewport"]
    problems = []
    if seen["scroll_width"] > vw:
        problems.append(f"the page scrolls sideways: {seen['scroll_width']} px wide in a {vw} px window")
    for table in seen["tables"]:
        fits = table["width"] <= table["container"]
        scrolls = table["scroll_box_right"] is not None and table["scroll_box_right"] <= vw
        if not (fits or scrolls):
            problems.append(f"table {table['id'] or '(no id)'} is {table['width']} px in {table['container']} px "
                            "with no scroll box inside the window")
    for img in seen["images"]:
        fits = img["width"] <= min(img["container"], vw) + 0.5
        scrolls = img["scroll_box_right"] is not None and img["scroll_box_right"] <= vw
        if not (fits or scrolls):
            problems.append(f"an image is {img['width']:.0f} px wide in {img['container']} px ({vw} px window) "
                            "with no scroll box inside the window")
        natural_w, natural_h = img["natural"]
        shown_w, shown_h = img["shown"]
        if natural_w and shown_w / natural_w < min_scale:  # labels drawn at 110 dpi, shrunk past reading
            problems.append(f"an image is shown at {shown_w / natural_w:.0%} of the {natural_w} px it was drawn at")
        if natural_h and shown_h and abs(shown_w / shown_h - natural_w / natural_h) > 0.02 * natural_w / natural_h:
            problems.append(f"an image is distorted: {shown_w}x{shown_h} shown, {natural_w}x{natural_h} drawn")
    if seen["widest_line_ch"] > max_line_ch:
        problems.append(f"text lines run to {seen['widest_line_ch']:.0f} characters")
    return problems


def outcomes(models: list[str] = MODELS, languages: list[str] = LANGUAGES) -> dict[tuple, str]:
    """A fixed pseudo-random grid: stronger models answer more, generated templates fail to parse now and then."""
    rng = random.Random(7)
    grid = {}
    for template in TEMPLATES:
        for strength, model in enumerate(models, 2):
            for language in languages:
                weights = [strength, 8 - strength, 0 if template == "paper" else 1]
                grid[(model, language, template)] = "".join(rng.choices("10x", weights, k=len(IDS)))
    return grid


def build_report(root: Path, models: list[str], languages: list[str]) -> Path:
    """The report of a hand-made grid of ``models`` x ``languages`` x TEMPLATES on Belebele-shaped items."""
    from babeleval.analysis import plots, report
    from babeleval.analysis.bootstrap import leaderboard_intervals
    from babeleval.analysis.settings import AnalysisSettings

    _, scores = write_results(root, models=models, outcomes=outcomes(models, languages))
    raws = []
    for path in sorted((root / "results/raw").rglob("*.jsonl")):  # Thai answers that could not be read: the
        # parse-failure examples show them
        path.write_text(path.read_text(encoding="utf-8").replace('"response": "zzz"',
                                                                 f'"response": "{THAI_ANSWER}"'), encoding="utf-8")
        raws.append(outcomes_from_raw(path))
    tables = report_tables(raws, scores, n_samples=20)
    tables["leaderboard"] = leaderboard_intervals(tables["leaderboard"], raws, seed=0, n_samples=20)
    board = tables["leaderboard"]
    figures = {"belebele": {"heatmap": plots.heatmap(board, "belebele", root / "heatmap.png"),
                            "template_spread": plots.template_spread(board, "belebele", root / "template_spread.png"),
                            "parse_failures": plots.parse_failures(tables["parse_failures"], "belebele",
                                                                   root / "parse_failures.png")}}
    page = root / "report.html"
    page.write_text(report.render(tables, figures, AnalysisSettings(seed=1)), encoding="utf-8")
    return page


@pytest.fixture(scope="module")
def wide_report(tmp_path_factory) -> Path:
    return build_report(tmp_path_factory.mktemp("wide"), MODELS, LANGUAGES)


@pytest.fixture(scope="module")
def small_grid_report(tmp_path_factory) -> Path:
    """3 models x 6 languages x 3 templates: the size of a first real study."""
    return build_report(tmp_path_factory.mktemp("grid"), MODELS[:3], LANGUAGES[:6])


@pytest.mark.parametrize("width", [1366, 1024])
def test_the_report_leads_with_the_answer(small_grid_report, tmp_path, width):
    """First the models x tasks table, with interval and n per model; then per task models x languages; then the
    figures; the sentences after. Screenshots are kept beside the report for a person to look at."""
    page = small_grid_report.read_text(encoding="utf-8")
    sections = re.findall(r'<h2 id="([^"]+)"', page)
    assert sections[:4] == ["overall", "leaderboard", "figures", "findings"]
    overall = page.split('id="overall-table"')[1].split("</table>")[0]
    assert all(f"<th>{model}</th>" in overall for model in MODELS[:3])
    assert len(re.findall(r"\d+\.\d \[\d+\.\d, \d+\.\d\] n=60†", overall)) == 3  # 6 languages x 10 items
    assert "exact Clopper-Pearson binomial interval for acc" in page.split("<nav>")[0]  # the method line
    seen = measure(small_grid_report, width, 900, tmp_path)
    assert layout_problems(seen) == []
    shot = small_grid_report.parent / f"report-{width}.png"
    run_chromium("--hide-scrollbars", f"--window-size={width},2400", f"--screenshot={shot}",
                 small_grid_report.as_uri(), profile=tmp_path / "profile")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")


@pytest.mark.parametrize("grid", ["small_grid_report", "wide_report"])
def test_the_first_screen_fits_a_laptop_without_scrolling(grid, request, tmp_path):
    """At 1366x768 the per-task headline (score, interval, n, chance, parse failures, what went in, what stands
    out) ends above the fold: 3 models x 6 languages, and 4 long-named models x 30 languages."""
    page = request.getfixturevalue(grid)
    seen = measure(page, 1366, 768, tmp_path)
    print(f"{grid}: first screen ends at {seen['first_screen_bottom']} px of 768")
    assert seen["first_screen_bottom"] is not None and seen["first_screen_bottom"] <= 768
    assert seen["first_table_right"] <= 1366  # no sideways scroll either: every column in view
    shot = page.parent / "first-screen-1366x768.png"
    run_chromium("--hide-scrollbars", "--window-size=1366,768", f"--screenshot={shot}", page.as_uri(),
                 profile=tmp_path / "profile")
    print(f"screenshot: {shot}")


def test_the_wide_report_has_wide_content(wide_report):
    page = wide_report.read_text(encoding="utf-8")
    assert "<script" not in page  # the page stays a document; only the measured copy carries a script
    assert page.count("<img ") == 3 and THAI_ANSWER[:60] in page and MODELS[1] in page
    assert all(f"<th>{language}</th>" in page for language in LANGUAGES)  # one column per language


@pytest.mark.parametrize("width,height", [(1366, 768), (1280, 800), (1024, 768)])
def test_report_reads_well_at_laptop_width(wide_report, tmp_path, width, height):
    seen = measure(wide_report, width, height, tmp_path)
    print(f"{width}x{height}: page {seen['scroll_width']} px in {seen['viewport']} px; widest table "
          f"{max(t['width'] for t in seen['tables'])} px; images "
          f"{[(round(i['width']), i['natural'][0]) for i in seen['images']]} px (shown, drawn); "
          f"widest line {seen['widest_line_ch']:.0f} ch")
    assert len(seen["tables"]) > 10 and max(t["width"] for t in seen["tables"]) > width  # wide tables exist
    assert len(seen["images"]) == 3
    problems = layout_problems(seen)
    print("\n".join(problems))
    assert problems == []


def test_the_measurement_catches_a_page_that_overflows(tmp_path, wide_report):
    img = re.search(r'<img src="([^"]+)"', wide_report.read_text(encoding="utf-8")).group(1)
    cells = "".join(f"<td>{language}</td>" for language in LANGUAGES * 20)
    bad = tmp_path / "wide.html"
    bad.write_text(f'<!DOCTYPE html><html><body><p>{"word " * 400}</p><table id="bare"><tr>{cells}</tr></table>'
                   f'<img src="{img}" style="width:3000px;height:200px"><img src="{img}" style="width:400px">'
                   "</body></html>", encoding="utf-8")
    problems = layout_problems(measure(bad, 1366, 768, tmp_path))
    assert any(p.startswith("the page scrolls sideways") for p in problems)
    assert any(p.startswith("table bare is") for p in problems)
    assert any(p.startswith("an image is 3000 px wide") for p in problems)
    assert any(p.startswith("an image is distorted") for p in problems)
    assert any(re.match(r"an image is shown at \d+% of the \d+ px it was drawn at", p) for p in problems)
    assert any(p.startswith("text lines run to") for p in problems)
