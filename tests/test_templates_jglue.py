"""Golden prompts for every JGLUE template version.

The reference below restates, per task and version, what the jp-stable
harness (Stability-AI/lm-evaluation-harness, lm_eval/tasks/ja/*.py, and
``Task.fewshot_context`` in lm_eval/base.py) builds: DESCRIPTION, then the
exemplars as ``doc_to_text + doc_to_target`` joined by FEWSHOT_SEP, then
FEWSHOT_SEP, then ``doc_to_text`` of the item; the choices scored are the
choice texts with no leading space. Our templates must give byte-identical
prompts for the exemplars our sampler picked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from babeleval.prompts.render import build_requests
from babeleval.tasks import get_task
from babeleval.prompts.templates import available_templates, load_template
from resolved_record import prompt_record_for

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "data" / "samples"
ALPACA = "以下は、タスクを説明する指示と、文脈のある入力の組み合わせです。要求を適切に満たす応答を書きなさい。\n\n"
LLAMA = "<s>[INST] <<SYS>>\nあなたは役立つアシスタントです。\n<</SYS>>\n\n"
LLAMA_SEP = " </s><s>[INST] "


# -- the reference: (description, fewshot_sep, doc_to_text, doc_to_target) per task and version --------


def jcqa(version):
    dash = lambda d, sep: sep.join(f"- {c}" for c in d["choices"])
    target = lambda d: d["choices"][d["answer"]]
    if version == "0.1":
        return ("[問題]に対する[答え]を[選択肢]の中から選んでください。\n\n", "\n\n",
                lambda d: f"[問題]:{d['question']}\n[選択肢]:[{', '.join(d['choices'])}]\n[答え]:", target)
    if version == "0.2":
        return ("質問と回答の選択肢を入力として受け取り、選択肢から回答を選択してください。なお、回答は選択肢の番号(例:0)でするものとします。 \n\n",
                "\n\n",
                lambda d: f"質問:{d['question']}\n選択肢:{','.join(f'{i}.{c}' for i, c in enumerate(d['choices']))}\n回答:",
                lambda d: f"{d['answer']}")
    if version == "0.2.1":
        return ("与えられた選択肢の中から、最適な答えを選んでください。 \n\n", "\n\n",
                lambda d: f"質問：{d['question']}\n選択肢：\n{dash(d, chr(10))}\n回答：", target)
    if version == "0.3":
        return (ALPACA, "\n\n",
                lambda d: "### 指示:\n与えられた選択肢の中から、最適な答えを選んでください。出力は以下から選択してください：\n"
                          f"{dash(d, chr(10))}\n\n### 入力:\n{d['question']}\n\n### 応答:\n", target)
    if version == "0.4":
        return ("ユーザー: 与えられた選択肢の中から、最適な答えを選んでください。<NL>システム: 分かりました。<NL>", "<NL>",
                lambda d: f"ユーザー: 質問：{d['question']}<NL>選択肢：<NL>{dash(d, '<NL>')}<NL>システム: ", target)
    if version == "0.5":
        return ("ユーザー: 与えられた選択肢の中から、最適な答えを選んでください。\nシステム: 分かりました。\n", "\n",
                lambda d: f"ユーザー: 質問：{d['question']}\n選択肢：\n{dash(d, chr(10))}\nシステム: ", target)
    if version == "0.6":
        return (LLAMA, LLAMA_SEP,
                lambda d: "与えられた5つの選択肢の中から、最適な答えを選んでください。出力は以下から選択してください：\n"
                          f"{dash(d, chr(10))}\n\n質問：{d['question']} [/INST] ", target)
    raise KeyError(version)


NLI = ["含意", "矛盾", "中立"]
NLI_INSTR = "与えられた前提と仮説の関係を回答してください。\n\n出力は以下から選択してください：\n" + "\n".join(NLI)


def jnli(version):
    target = lambda d: NLI[d["answer"]]
    if version == "0.2":
        return ("前提と仮説の関係を含意、矛盾、中立の中から回答してください。\n\n" + "制約:\n"
                + "- 前提から仮説が、論理的知識や常識的知識を用いて導出可能である場合は含意と出力\n"
                + "- 前提と仮説が両立しえない場合は矛盾と出力\n" + "- そのいずれでもない場合は中立と出力\n\n", "\n\n",
                lambda d: f"前提:{d['premise']}\n仮説:{d['hypothesis']}\n関係:", target)
    if version == "0.3":
        return (ALPACA, "\n\n",
                lambda d: f"### 指示:\n{NLI_INSTR}\n\n### 入力:\n前提：{d['premise']}\n仮説：{d['hypothesis']}\n\n### 応答:\n",
                target)
    if version == "0.4":
        return ("ユーザー: 与えられた前提と仮説の関係を回答してください。出力は以下から選択してください：<NL>" + "<NL>".join(NLI)
                + "<NL>システム: 分かりました。<NL>", "<NL>",
                lambda d: f"ユーザー: 前提：{d['premise']}<NL>仮説：{d['hypothesis']}<NL>システム: ", target)
    if version == "0.5":
        return ("ユーザー: 与えられた前提と仮説の関係を回答してください。出力は以下から選択してください：\n" + "\n".join(NLI)
                + "\nシステム: 分かりました。\n", "\n",
                lambda d: f"ユーザー: 前提：{d['premise']}\n仮説：{d['hypothesis']}\nシステム: ", target)
    if version == "0.6":
        return (LLAMA, LLAMA_SEP,
                lambda d: f"{NLI_INSTR}\n\n前提：{d['premise']}\n仮説：{d['hypothesis']} [/INST] ", target)
    raise KeyError(version)


def marc(version):
    words = ["positive", "negative"] if version == "0.2" else ["ポジティブ", "ネガティブ"]
    target = lambda d: words[d["answer"]]
    instr = "以下の製品レビューを、ポジティブまたはネガティブの感情クラスのいずれかに分類してください。"
    if version == "0.2":
        return ("製品レビューをnegativeかpositiveのいずれかのセンチメントに分類してください。出力は小文字化してください。 \n\n", "\n\n",
                lambda d: f"製品レビュー:{d['text']}\nセンチメント:", target)
    if version == "0.3":
        return (ALPACA, "\n\n", lambda d: f"### 指示:\n{instr}\n\n### 入力:\n{d['text']}\n\n### 応答:\n", target)
    if version == "0.4":
        return ("ユーザー: 与えられた製品レビューを、ポジティブまたはネガティブの感情クラスのいずれかに分類してください。<NL>システム: 分かりました。<NL>",
                "<NL>", lambda d: f"ユーザー: {d['text']}<NL>システム: ", target)
    if version == "0.5":
        return ("ユーザー: 与えられた製品レビューを、ポジティブまたはネガティブの感情クラスのいずれかに分類してください。\nシステム: 分かりました。\n",
                "\n", lambda d: f"ユーザー: {d['text']}\nシステム: ", target)
    if version == "0.6":
        return (LLAMA, LLAMA_SEP, lambda d: f"{instr}\n\n{d['text']} [/INST] ", target)
    raise KeyError(version)


def squad(version):
    target = lambda d: d["answer"][0]
    instr = "与えられた文脈から、質問に対する答えを抜き出してください。"
    if version == "0.1":
        return ("[題名]と[問題]から[質問]に対する[答え]を抜き出しなさい\n\n", "\n\n",
                lambda d: "[題名]:" + d["title"] + "\n" + "[問題]:" + d["context"] + "\n" + "[質問]:" + d["question"]
                + "\n" + "[答え]:", target)
    if version == "0.2":
        return ("質問に対する回答を文章から一言で抽出してください。回答は名詞で答えてください。\n\n", "\n\n",
                lambda d: "文章:" + d["context"] + "\n" + "質問:" + d["question"] + "\n" + "回答:", target)
    if version == "0.3":
        return (ALPACA, "\n\n",
                lambda d: f"### 指示:\n{instr}\n\n### 入力:\n文脈：{d['context']}\n質問：{d['question']}\n\n### 応答:\n", target)
    if version == "0.4":
        return (f"ユーザー: {instr}<NL>システム: 分かりました。<NL>", "<NL>",
                lambda d: f"ユーザー: 文脈：{d['context']}<NL>質問：{d['question']}<NL>システム: ", target)
    if version == "0.5":
        return (f"ユーザー: {instr}\nシステム: 分かりました。\n", "\n",
                lambda d: f"ユーザー: 文脈：{d['context']}\n質問：{d['question']}\nシステム: ", target)
    if version == "0.6":
        return (LLAMA, LLAMA_SEP, lambda d: f"{instr}\n\n文脈：{d['context']}\n質問：{d['question']} [/INST] ", target)
    raise KeyError(version)


REFERENCE = {"jcommonsenseqa": jcqa, "jnli": jnli, "marc_ja": marc, "jsquad": squad, "jaquad": squad}
VERSIONS = {
    "jcommonsenseqa": ["0.1", "0.2", "0.2.1", "0.3", "0.4", "0.5", "0.6"],
    "jnli": ["0.2", "0.3", "0.4", "0.5", "0.6"],
    "marc_ja": ["0.2", "0.3", "0.4", "0.5", "0.6"],
    "jsquad": ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6"],
    "jaquad": ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6"],
}
FEWSHOT = {"jcommonsenseqa": 3, "jnli": 3, "marc_ja": 3, "jsquad": 2, "jaquad": 2}


def test_every_published_version_is_a_file():
    for task, versions in VERSIONS.items():
        assert available_templates(task, ROOT) == sorted(versions), task


def _data(task):
    source = {"kind": "local", "path": str(SAMPLES / ("jsquad" if task == "jaquad" else task))}
    if task == "jaquad":  # JaQuAD's own layout is tested with the loader; its prompts are JSQuAD's
        task_obj = get_task("jsquad")
    else:
        task_obj = get_task(task)
    items = task_obj.load(source, "jpn_Jpan")
    train = task_obj.load(source, "jpn_Jpan", part="fewshot")
    return items, train


@pytest.mark.parametrize("task,version", [(t, v) for t, vs in VERSIONS.items() for v in vs])
@pytest.mark.parametrize("shots", [0, None])
def test_golden_prompts(task, version, shots):
    template = load_template(task, version, ROOT)
    plan = prompt_record_for(task, "jpn_Jpan", version).fewshot
    n = template.fewshot.n if shots is None else shots
    assert template.fewshot.n == FEWSHOT[task]
    if shots is not None:
        from dataclasses import replace

        plan = replace(plan, n=shots)
    items, train = _data(task)
    requests = build_requests(template, items, train, fewshot=plan, seed=1234, limit=3, shuffle_seed=42)
    description, sep, doc_to_text, doc_to_target = REFERENCE[task](version)
    by_id = {row["id"]: row for row in train}
    for request in requests:
        item = next(i for i in items if i["id"] == request["id"])
        exemplars = [by_id[i] for i in request["exemplar_ids"]]
        assert len(exemplars) == n
        labeled = sep.join(doc_to_text(ex) + doc_to_target(ex) for ex in exemplars) + sep if n else ""
        expected = description + labeled + doc_to_text(item)
        assert request["prompt"] == expected
        if template.mode == "loglikelihood":
            words = list(template.choices) if template.choices else item["choices"]
            assert request["continuations"] == words  # the choice texts, no leading space


def test_jnli_exemplars_are_stratified():
    template = load_template("jnli", "0.2", ROOT)
    plan = prompt_record_for("jnli", "jpn_Jpan", "0.2").fewshot
    items, train = _data("jnli")
    for request in build_requests(template, items, train, fewshot=plan, seed=7, shuffle_seed=42):
        labels = sorted(next(r for r in train if r["id"] == i)["answer"] for i in request["exemplar_ids"])
        assert labels == [0, 1, 2]  # the train labels are balanced: one exemplar each


def test_eval_items_are_shuffled_with_seed_42_before_the_limit():
    import random

    template = load_template("jcommonsenseqa", "0.1", ROOT)
    plan = prompt_record_for("jcommonsenseqa", "jpn_Jpan", "0.1").fewshot
    items, train = _data("jcommonsenseqa")
    expected = list(items)
    random.Random(42).shuffle(expected)
    requests = build_requests(template, items, train, fewshot=plan, seed=1234, limit=3, shuffle_seed=42)
    assert [r["id"] for r in requests] == [i["id"] for i in expected[:3]]


def test_exemplars_do_not_depend_on_the_template():
    items, train = _data("jcommonsenseqa")
    a = build_requests(load_template("jcommonsenseqa", "0.1", ROOT), items, train,
                       fewshot=prompt_record_for("jcommonsenseqa", "jpn_Jpan", "0.1").fewshot, seed=5, shuffle_seed=42)
    b = build_requests(load_template("jcommonsenseqa", "0.6", ROOT), items, train,
                       fewshot=prompt_record_for("jcommonsenseqa", "jpn_Jpan", "0.6").fewshot, seed=5, shuffle_seed=42)
    assert [r["exemplar_ids"] for r in a] == [r["exemplar_ids"] for r in b]


def test_templates_cite_their_source():
    for task, versions in VERSIONS.items():
        for version in versions:
            template = load_template(task, version, ROOT)
            assert "Stability-AI/lm-evaluation-harness, branch jp-stable" in template.reference
            assert f"PROMPT_VERSION {version}" in template.reference
