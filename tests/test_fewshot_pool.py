"""A few-shot request larger than its pool: an error naming the template, or a recorded reduction where allowed."""

from pathlib import Path

import pytest

from babeleval.core.errors import DataError, TemplateError
from babeleval.prompts.render import build_requests
from babeleval.score.job import fewshot_shown
from babeleval.prompts.templates import FewShot, Template, load_template

QUESTIONS = ["Wie viele Beine hat eine Spinne?", "ما عاصمة مصر؟", "東京は何県ですか?", "Сколько дней в неделе?",
             "इंद्रधनुष में कितने रंग होते हैं?", "¿Qué idioma se habla en Chile?"]


def _items(language="deu_Latn"):
    return [{"id": f"q{k}", "task": "toy", "language": language, "group": f"p{k // 2}", "question": q,
             "choices": ["eins", "zwei"], "answer": k % 2} for k, q in enumerate(QUESTIONS)]


def _template(n, sampler="random", allow_fewer=False):
    return Template(task="toy", name="many", path=Path("prompts/toy/many.yaml"), mode="generate",
                    prompt="{{ question }}", target=" {{ answer_letter }}", parser="final_letter",
                    fewshot=FewShot(n=n, sampler=sampler, allow_fewer=allow_fewer))


@pytest.mark.parametrize("sampler", ["random", "first", "stratified"])
def test_more_shots_than_the_pool_holds_stop_naming_the_template_and_the_pool(sampler):
    items = _items()
    with pytest.raises(DataError, match=r"prompts/toy/many\.yaml: fewshot\.n is 50, but its exemplar pool "
                                        r"\(language deu_Latn\) holds only 6 rows"):
        many = _template(50, sampler)
        build_requests(many, items, items, fewshot=many.fewshot, seed=1)


def test_where_the_template_allows_fewer_the_reduction_is_recorded():
    items = _items()
    template = _template(50, allow_fewer=True)
    requests = build_requests(template, items, items, fewshot=template.fewshot, seed=1)
    assert {len(r["exemplar_ids"]) for r in requests} == {4}  # 6 rows, less the item's own passage of 2
    assert fewshot_shown(template.fewshot, requests) == {"asked": 50, "fewest_shown": 4, "items_shown_fewer": 6}
    stratified = _template(50, "stratified", allow_fewer=True)
    assert {len(r["exemplar_ids"])
            for r in build_requests(stratified, items, items, fewshot=stratified.fewshot, seed=1)} == {4}


def test_a_pool_large_enough_shows_every_shot_asked_for():
    items = _items()
    template = _template(3)
    requests = build_requests(template, items, items, fewshot=template.fewshot, seed=1)
    assert fewshot_shown(template.fewshot, requests) == {"asked": 3, "fewest_shown": 3, "items_shown_fewer": 0}


def test_allow_fewer_must_be_a_boolean(tmp_path):
    path = tmp_path / "prompts" / "toy" / "bad.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("mode: generate\nfewshot: {n: 5, allow_fewer: 'yes'}\nprompt: '{{ question }}'\n"
                    "target: '{{ answer_letter }}'\nparser: final_letter\n", encoding="utf-8")
    with pytest.raises(TemplateError, match=r"bad\.yaml: fewshot\.allow_fewer must be true or false"):
        load_template("toy", "bad", tmp_path)


def test_an_empty_question_or_continuation_stops_naming_the_template():
    from babeleval.prompts.render import continuations

    items = _items()
    empty = Template(task="toy", name="empty", path=Path("prompts/toy/empty.yaml"), mode="generate",
                     prompt="{{ question[:0] }} \n", target="{{ answer_letter }}", parser="final_letter")
    with pytest.raises(TemplateError, match=r"prompts/toy/empty\.yaml: 'prompt' renders to an empty text for item q0"):
        build_requests(empty, items, items, fewshot=empty.fewshot, seed=1)
    blank = Template(task="toy", name="blank", path=Path("prompts/toy/blank.yaml"), mode="loglikelihood",
                     prompt="{{ question }}", target="{{ answer_text }}",
                     continuation="{% if index %}{{ choice }}{% endif %}")
    with pytest.raises(TemplateError, match=r"blank\.yaml: 'continuation' renders to an empty text for choice A of "
                                            r"item q0"):
        continuations(blank, items[0])
