"""Prompt variants: names, gold remapping, enumerators read back, sampling, and the grid's expansion."""

import copy

import pytest
import yaml

from babeleval.core.errors import ConfigError, TemplateError
from babeleval.grid import variant_sets
from babeleval.grid.params import validate
from babeleval.prompts import variants
from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template
from babeleval.score import scorers
from resolved_record import prompt_record_for

from conftest import TINY_GRID

BASE = "formatspread"


def item(language, number, answer=2, choices=None):
    return {
        "id": f"p{number}#1", "task": "belebele", "language": language, "group": f"p{number}",
        "passage": {"jpn_Jpan": "駅の前に小さな本屋がある。", "hin_Deva": "स्टेशन के सामने एक छोटी किताबों की दुकान है।",
                    "eng_Latn": "A small bookshop stands in front of the station.",
                    "arb_Arab": "توجد مكتبة صغيرة أمام المحطة."}[language] + f" ({number})",
        "question": {"jpn_Jpan": "本屋はどこにあるか。", "hin_Deva": "दुकान कहाँ है?", "eng_Latn": "Where is the shop?",
                     "arb_Arab": "أين المكتبة؟"}[language],
        "choices": choices or ["north", "south", "station", "river"],
        "answer": answer,
    }


@pytest.fixture
def params(repo_root):
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"] = {"belebele": copy.deepcopy(params["tasks"]["belebele"])}
    params["tasks"]["belebele"]["templates"] = [BASE]
    return params


# -- names ------------------------------------------------------------------------------------------


def test_base_name_renders_the_papers_zero_shot_text(repo_root):
    template = load_template("belebele", BASE, repo_root)
    plan = prompt_record_for("belebele", "eng_Latn", BASE, repo_root).fewshot
    request = build_requests(template, [item("eng_Latn", 1)], [], fewshot=plan, seed=1)[0]
    assert request["prompt"] == ("Passage: A small bookshop stands in front of the station. (1)\n"
                                 "Question: Where is the shop?\nA: north\nB: south\nC: station\nD: river\nAnswer:")
    assert request["continuations"] == [" A", " B", " C", " D"]


def test_a_variant_has_its_own_name_and_hash(repo_root):
    base = load_template("belebele", BASE, repo_root)
    variant = load_template("belebele", f"{BASE}~enum=num~sep=dash", repo_root)
    again = load_template("belebele", f"{BASE}~enum=num~sep=dash", repo_root)
    assert variant.name == f"{BASE}~enum=num~sep=dash"
    assert variant.sha256 != base.sha256 and variant.sha256 == again.sha256
    assert variant.path == base.path  # editing the family file reruns every variant


@pytest.mark.parametrize("name, canonical", [
    (f"{BASE}~sep=dash~enum=num", f"{BASE}~enum=num~sep=dash"),   # axes out of order
    (f"{BASE}~enum=upper~sep=dash", f"{BASE}~sep=dash"),         # a default spelt out
    (f"{BASE}~shots=0", BASE),                                    # the file's own shot count
])
def test_one_variant_has_one_name(repo_root, name, canonical):
    with pytest.raises(TemplateError, match=f"write it as '{canonical}'"):
        load_template("belebele", name, repo_root)


@pytest.mark.parametrize("name, message", [
    (f"{BASE}~enum=roman", r"enum=roman is not a known value"),
    (f"{BASE}~colour=red", r"unknown variation axis 'colour'"),
    (f"{BASE}~enum", r"'enum' is not axis=value"),
    (f"{BASE}~order=shuffle", r"expected orig, rev or p<k>"),
    ("paper~enum=num", r"needs a 'layout'"),  # a fixed prompt text cannot change its enumerators
])
def test_bad_variant_names_are_named_errors(repo_root, name, message):
    with pytest.raises(TemplateError, match=message):
        load_template("belebele", name, repo_root)


def test_order_and_shots_apply_to_any_template(repo_root):
    template = load_template("belebele", "paper~order=rev~shots=2", repo_root)
    assert template.fewshot.n == 2 and template.variant.get("order") == "rev"


# -- what the variants change -------------------------------------------------------------------------


@pytest.mark.parametrize("language, enumerators", [
    ("jpn_Jpan", ["ア", "イ", "ウ", "エ"]),
    ("hin_Deva", ["क", "ख", "ग", "घ"]),
    ("arb_Arab", ["أ", "ب", "ج", "د"]),
    ("eng_Latn", ["A", "B", "C", "D"]),  # no script of its own: Latin capitals
])
def test_native_enumerators_follow_the_script(repo_root, language, enumerators):
    template = load_template("belebele", f"{BASE}~enum=native~choice=paren", repo_root)
    plan = prompt_record_for("belebele", language, f"{BASE}~enum=native~choice=paren", repo_root).fewshot
    request = build_requests(template, [item(language, 1)], [], fewshot=plan, seed=1)[0]
    assert request["continuations"] == [f" {e}" for e in enumerators]
    for enumerator, choice in zip(enumerators, request["choices"]):
        assert f"({enumerator}) {choice}" in request["prompt"]


def test_target_language_instruction_and_labels(repo_root):
    template = load_template("belebele", f"{BASE}~enum=native~case=upper~instr=tgt", repo_root)
    plan = prompt_record_for("belebele", "jpn_Jpan", f"{BASE}~enum=native~case=upper~instr=tgt", repo_root).fewshot
    prompt = build_requests(template, [item("jpn_Jpan", 1)], [], fewshot=plan, seed=1)[0]["prompt"]
    assert prompt.startswith("文章を読んで、正しい答えを選んでください（ア/イ/ウ/エ）。\n文章: ")
    assert prompt.endswith("答え:")
    english = load_template("belebele", f"{BASE}~case=upper~instr=en", repo_root)
    english_plan = prompt_record_for("belebele", "hin_Deva", f"{BASE}~case=upper~instr=en", repo_root).fewshot
    prompt = build_requests(english, [item("hin_Deva", 1)], [], fewshot=english_plan, seed=1)[0]["prompt"]
    assert prompt.startswith("Read the passage and choose the correct answer (A/B/C/D).\nPASSAGE: ")


def test_separators_spacing_and_choice_format(repo_root):
    template = load_template("belebele", f"{BASE}~enum=lower~sep=dash~choice=close~space=sp", repo_root)
    plan = prompt_record_for("belebele", "eng_Latn", f"{BASE}~enum=lower~sep=dash~choice=close~space=sp",
                             repo_root).fewshot
    prompt = build_requests(template, [item("eng_Latn", 1)], [], fewshot=plan, seed=1)[0]["prompt"]
    assert prompt == ("Passage - A small bookshop stands in front of the station. (1) Question - Where is the shop? "
                      "a) north b) south c) station d) river Answer -")


def test_choice_order_remaps_the_gold(repo_root):
    items = [item("hin_Deva", n, answer=n % 4) for n in range(1, 9)]
    template = load_template("belebele", f"{BASE}~order=p1", repo_root)
    plan = prompt_record_for("belebele", "hin_Deva", f"{BASE}~order=p1", repo_root).fewshot
    requests = build_requests(template, items, [], fewshot=plan, seed=1)
    orders = set()
    for original, request in zip(items, requests):
        order = request["choice_order"]
        orders.add(tuple(order))
        assert request["choices"] == [original["choices"][i] for i in order]
        assert request["choices"][request["answer"]] == original["choices"][original["answer"]]
    assert len(orders) > 1  # a permutation per item, not one for all
    plan = prompt_record_for("belebele", "hin_Deva", f"{BASE}~order=p1", repo_root).fewshot
    again = build_requests(load_template("belebele", f"{BASE}~order=p1", repo_root), items[::-1], [], fewshot=plan,
                           seed=99)
    assert {r["id"]: r["choice_order"] for r in again} == {r["id"]: r["choice_order"] for r in requests}
    plan = prompt_record_for("belebele", "hin_Deva", f"{BASE}~order=rev", repo_root).fewshot
    reverse = build_requests(load_template("belebele", f"{BASE}~order=rev", repo_root), items[:1], [], fewshot=plan,
                             seed=1)[0]
    assert reverse["choices"] == ["river", "station", "south", "north"] and reverse["answer"] == 2


def test_exemplars_show_their_own_remapped_gold(repo_root):
    pool = [item("eng_Latn", n, answer=0) for n in range(10, 14)]
    template = load_template("belebele", f"{BASE}~enum=num~order=rev~shots=2", repo_root)
    plan = prompt_record_for("belebele", "jpn_Jpan", f"{BASE}~enum=num~order=rev~shots=2", repo_root).fewshot
    request = build_requests(template, [item("jpn_Jpan", 1)], pool, fewshot=plan, seed=3)[0]
    assert len(request["exemplar_ids"]) == 2
    assert request["prompt"].count("Answer: 4\n\n") == 2  # gold 0 shown last, as "4"
    orders = {tuple(build_requests(load_template("belebele", name, repo_root), [item("jpn_Jpan", 1)], pool,
                                   fewshot=prompt_record_for("belebele", "jpn_Jpan", name, repo_root).fewshot,
                                   seed=3)[0]["exemplar_ids"]) for name in (f"{BASE}~shots=2", f"{BASE}~shots=2~shotorder=rev")}
    assert len(orders) == 2


# -- what is scored -----------------------------------------------------------------------------------


@pytest.mark.parametrize("enum, language, response, answer", [
    ("num", "eng_Latn", "2", 1),
    ("num", "eng_Latn", "The answer is (3).", 2),
    ("num", "eng_Latn", "#### 4", 3),
    ("num", "eng_Latn", "12 apples", None),      # a number, not an enumerator
    ("num", "eng_Latn", "B", None),              # a letter the prompt did not offer
    ("native", "jpn_Jpan", "答え：イ", 1),
    ("native", "hin_Deva", "उत्तर: ग", 2),
    ("native", "arb_Arab", "د", 3),
    ("lower", "eng_Latn", "b)", 1),
    ("lower", "eng_Latn", "a cat", None),        # the article, not choice a
])
def test_generated_answers_are_read_in_the_variants_enumerators(enum, language, response, answer):
    variant = variants.Variant(settings=(("enum", enum),))
    from babeleval.prompts.templates import Template
    from pathlib import Path

    template = Template(task="belebele", name=f"x~enum={enum}", path=Path("x.yaml"), mode="generate", prompt="",
                        target="", parser="final_letter", variant=variant)
    record = {"language": language, "response": response, "answer": 1, "choices": ["w", "x", "y", "z"]}
    scored = scorers.score_record("multiple_choice", record, template)
    assert scored["prediction"] == answer
    assert scored["parsed"] == (answer is not None)


# -- the grid -----------------------------------------------------------------------------------------


def test_grid_samples_k_variants_reproducibly(params, repo_root):
    params["tasks"]["belebele"]["variants"] = {BASE: {"sample": 6}}
    names = list(validate(params, root=repo_root).tasks["belebele"].templates)
    assert names[0] == BASE and len(names) == 7 and len(set(names)) == 7
    assert all(name.startswith(f"{BASE}~") for name in names[1:])
    assert list(validate(copy.deepcopy(params), root=repo_root).tasks["belebele"].templates) == names
    params["seed"] += 1
    assert list(validate(params, root=repo_root).tasks["belebele"].templates) != names


def test_grid_axes_override_and_all(params, repo_root):
    params["tasks"]["belebele"]["variants"] = {BASE: {"sample": "all", "axes": {"enum": ["upper", "num", "native"],
                                                                                   "order": ["orig", "rev"]}}}
    names = list(validate(params, root=repo_root).tasks["belebele"].templates)
    assert names == [BASE, f"{BASE}~order=rev", f"{BASE}~enum=num", f"{BASE}~enum=num~order=rev",
                     f"{BASE}~enum=native", f"{BASE}~enum=native~order=rev"]


def test_grid_lists_variants_by_name(params, repo_root):
    params["tasks"]["belebele"]["templates"] = ["paper", f"{BASE}~enum=num~instr=tgt"]
    grid = validate(params, root=repo_root)
    assert grid.tasks["belebele"].templates[f"{BASE}~enum=num~instr=tgt"].variant.get("instr") == "tgt"


def test_target_language_phrases_must_exist_for_every_language(params, repo_root):
    params["tasks"]["belebele"]["templates"] = [f"{BASE}~instr=tgt"]
    params["tasks"]["belebele"]["languages"] = ["eng_Latn", "zul_Latn"]
    with pytest.raises(ConfigError, match=r"needs phrases for zul_Latn in .*instruction_phrases.yaml"):
        validate(params, root=repo_root)


def test_grid_variant_errors_name_the_key(params, repo_root):
    params["tasks"]["belebele"]["variants"] = {"paper": {"sample": 3}}
    with pytest.raises(ConfigError, match=r"tasks\.belebele\.variants\.paper: .*declares no 'variations'"):
        validate(params, root=repo_root)
    params["tasks"]["belebele"]["variants"] = {BASE: {"sample": 3, "axes": {"enum": ["roman"]}}}
    with pytest.raises(ConfigError, match=r"variants\.formatspread: .*enum=roman is not a known value"):
        validate(params, root=repo_root)


def test_sampling_a_huge_space_does_not_list_it():
    axes = {axis: [str(i) for i in range(40)] for axis in ("shots",)}
    axes.update({"order": ["orig"] + [f"p{i}" for i in range(1, 1000)], "shotorder": ["orig"] + [f"p{i}" for i in range(1, 1000)]})
    points = variants.sample_settings(axes, 5, 7, "t", "b")
    assert len(points) == 5 and points == variants.sample_settings(axes, 5, 7, "t", "b")


def test_show_previews_any_variant_with_its_own_gold_label(repo_root, capsys, monkeypatch):
    from babeleval.cli.show import main

    monkeypatch.chdir(repo_root)
    assert main(["--params", "examples/formatspread.yaml", "--task", "belebele", "--language", "hin_Deva",
                 "--template", f"{BASE}~enum=native~instr=tgt~order=rev"]) == 0
    out = capsys.readouterr().out
    assert "(gold: ग)" in out  # the sample's first Hindi item: gold 2 of 4, shown third once reversed
    assert "अनुच्छेद पढ़िए और सही उत्तर चुनिए (क/ख/ग/घ)।" in out
    assert "continuations scored: ' क', ' ख', ' ग', ' घ'" in out


def test_choice_order_is_refused_where_classes_have_a_fixed_order(repo_root):
    params = yaml.safe_load(TINY_GRID.read_text(encoding="utf-8"))
    params["tasks"] = {"jnli": params["tasks"]["jnli"]}
    params["tasks"]["jnli"]["templates"] = ["0.2~order=rev"]
    with pytest.raises(ConfigError, match=r"0\.2~order=rev: 'order' permutes each item's own answer choices; a "
                                          r"classification task with label words"):
        validate(params, root=repo_root)
    params["tasks"]["jnli"]["templates"] = ["0.2~shots=1"]
    assert validate(params, root=repo_root).tasks["jnli"].templates["0.2~shots=1"].fewshot.n == 1


def test_shared_prefix_jobs_group_a_variant_sets_loglikelihood_variants(params, repo_root):
    params["tasks"]["belebele"]["templates"] = ["paper", "paper~order=rev", "instruct", BASE, f"{BASE}~enum=num",
                                                "blog"]
    grid = validate(params, root=repo_root)
    assert variant_sets.shared_prefix_sets(grid, "belebele") == {"paper": ["paper", "paper~order=rev"],
                                                                 BASE: [BASE, f"{BASE}~enum=num"]}
    assert variant_sets.shared_prefix_set(grid, "tiny-llama", "belebele", "paper~order=rev") == "paper"
    assert variant_sets.shared_prefix_set(grid, "tiny-llama", "belebele", "instruct") is None  # generate mode
    params["cache"] = {"enabled": False}  # the shared-prefix job hands its answers over through the cache
    assert variant_sets.shared_prefix_sets(validate(params, root=repo_root), "belebele") == {}


def test_sampled_variants_are_k_besides_the_listed_ones(params, repo_root):
    axes = {"enum": ["upper", "num"], "sep": ["colon", "dash"]}  # 3 variants besides the defaults
    params["tasks"]["belebele"]["variants"] = {BASE: {"sample": 2, "axes": axes}}
    first = list(validate(params, root=repo_root).tasks["belebele"].templates)
    assert len(first) == 3 and first[0] == BASE
    params["tasks"]["belebele"]["templates"] = [BASE, first[1]]  # one of the draws is now listed by name
    second = list(validate(params, root=repo_root).tasks["belebele"].templates)
    assert len(second) == 4 and set(first) < set(second)
