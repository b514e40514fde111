"""Golden prompts: the exact text each Belebele template produces, pinned."""

import pytest

from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template
from resolved_record import prompt_record_for


def item(n, language="eng_Latn", passage=None):
    return {
        "id": f"https://example.org/p{n}#1", "task": "belebele", "language": language, "group": f"https://example.org/p{n}",
        "passage": passage or f"Passage {n}.", "question": f"Question {n}?",
        "choices": [f"a{n}", f"b{n}", f"c{n}", f"d{n}"], "answer": n % 4,
    }


ITEMS = [item(n) for n in range(8)]


def test_paper_golden(repo_root):
    template = load_template("belebele", "paper", repo_root)
    plan = prompt_record_for("belebele", "eng_Latn", "paper", repo_root).fewshot
    [request] = build_requests(template, ITEMS[:1], ITEMS, fewshot=plan, seed=7)
    shots = request["exemplar_ids"]
    assert len(shots) == 5 and ITEMS[0]["id"] not in shots
    by_id = {i["id"]: i for i in ITEMS}
    expected_shots = [
        f"P: {by_id[s]['passage']}\nQ: {by_id[s]['question']}\n"
        + "".join(f"{L}: {c}\n" for L, c in zip("ABCD", by_id[s]["choices"]))
        + f"Answer: {'ABCD'[by_id[s]['answer']]}"
        for s in shots
    ]
    query = "P: Passage 0.\nQ: Question 0?\nA: a0\nB: b0\nC: c0\nD: d0\nAnswer:"
    assert request["prompt"] == "\n\n".join(expected_shots + [query])
    assert request["continuations"] == [" A", " B", " C", " D"]


def test_instruct_golden(repo_root):
    template = load_template("belebele", "instruct", repo_root)
    plan = prompt_record_for("belebele", "eng_Latn", "instruct", repo_root).fewshot
    [request] = build_requests(template, ITEMS[:1], ITEMS, fewshot=plan, seed=7)
    assert request["prompt"] == (
        "Given the following passage, query, and answer choices, output the letter corresponding to the correct answer.\n"
        "###\nPassage:\nPassage 0.\n###\nQuery:\nQuestion 0?\n###\nChoices:\n"
        "(A) a0\n(B) b0\n(C) c0\n(D) d0\n###\nAnswer:\n"
    )
    assert request["exemplar_ids"] == [] and "continuations" not in request
    assert template.generation.stop == ("\n",) and template.parser == "belebele_instruct"


def test_blog_golden_first_five_rows_are_exemplars(repo_root):
    template = load_template("belebele", "blog", repo_root)
    plan = prompt_record_for("belebele", "eng_Latn", "blog", repo_root).fewshot
    requests = build_requests(template, ITEMS, ITEMS, fewshot=plan, seed=7)
    # the Belebele tutorial blog: ds.select(range(0, 5)) are the examples, ds.select(range(5, len(ds))) the prompts
    assert [r["id"] for r in requests] == [i["id"] for i in ITEMS[5:]]
    shot = lambda i: (f"Passage {i}.\nQuestion: Question {i}?\nAnswer A: a{i}\nAnswer B: b{i}\nAnswer C: c{i}\n"
                      f"Answer D: d{i}\nCorrect answer: {'ABCD'[i % 4]}")
    assert requests[0]["prompt"] == "\n\n".join([shot(i) for i in range(5)] + [
        "Passage 5.\nQuestion: Question 5?\nAnswer A: a5\nAnswer B: b5\nAnswer C: c5\nAnswer D: d5\nCorrect answer:"])
    assert template.generation.decoding == "llama-precise" and template.generation.max_new_tokens == 5


def test_exemplars_never_share_the_items_passage(repo_root):
    template = load_template("belebele", "paper", repo_root)
    plan = prompt_record_for("belebele", "eng_Latn", "paper", repo_root).fewshot
    pool = [item(n) for n in range(6)] + [dict(item(0), id="https://example.org/p0#2")]
    requests = build_requests(template, pool[:1], pool, fewshot=plan, seed=1)
    assert all(not s.startswith("https://example.org/p0#") for s in requests[0]["exemplar_ids"])


def test_exemplars_are_seeded_and_template_independent(repo_root):
    paper = load_template("belebele", "paper", repo_root)
    paper_plan = prompt_record_for("belebele", "eng_Latn", "paper", repo_root).fewshot
    a = build_requests(paper, ITEMS[:3], ITEMS, fewshot=paper_plan, seed=1)
    b = build_requests(paper, ITEMS[:3], ITEMS, fewshot=paper_plan, seed=1)
    c = build_requests(paper, ITEMS[:3], ITEMS, fewshot=paper_plan, seed=2)
    assert [r["exemplar_ids"] for r in a] == [r["exemplar_ids"] for r in b]
    assert [r["exemplar_ids"] for r in a] != [r["exemplar_ids"] for r in c]
    # an item's exemplars do not depend on which other items are evaluated (limits, new languages)
    alone = build_requests(paper, ITEMS[2:3], ITEMS, fewshot=paper_plan, seed=1)
    assert alone[0]["exemplar_ids"] == a[2]["exemplar_ids"]


def test_limit_applies_after_first_exemplars(repo_root):
    blog = load_template("belebele", "blog", repo_root)
    blog_plan = prompt_record_for("belebele", "eng_Latn", "blog", repo_root).fewshot
    requests = build_requests(blog, ITEMS, ITEMS, fewshot=blog_plan, seed=1, limit=2)
    assert [r["id"] for r in requests] == [ITEMS[5]["id"], ITEMS[6]["id"]]


@pytest.mark.parametrize("name", ["paper", "instruct", "blog"])
def test_templates_render_the_bundled_sample(repo_root, name):
    from babeleval.tasks import get_task

    belebele = get_task("belebele")

    template = load_template("belebele", name, repo_root)
    plan = prompt_record_for("belebele", "hin_Deva", name, repo_root).fewshot
    source = {"kind": "local", "path": "data/samples/belebele"}
    items = belebele.load(source, "hin_Deva", repo_root)
    pool = belebele.load(source, template.fewshot.language, repo_root) if template.fewshot.language else items
    requests = build_requests(template, items, pool, fewshot=plan, seed=1234)
    assert requests and all(r["prompt"] for r in requests)
    assert all(r["language"] == "hin_Deva" for r in requests)
