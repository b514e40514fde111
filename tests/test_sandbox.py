"""Templates render in a sandbox: they cannot reach Python internals, read files or run code.

Each attempt fails with a TemplateError naming the template file and key, and does nothing: no file is read
or written, no command runs. Ordinary template features keep working.
"""

from __future__ import annotations

import pytest
import yaml

from babeleval.core.errors import TemplateError
from babeleval.prompts.render import build_requests
from babeleval.prompts.templates import load_template
from resolved_record import prompt_record_for

SECRET_FILE_TEXT = "the-contents-of-a-private-file"


def write_template(root, prompt, name="probe"):
    path = root / "prompts" / "belebele" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"mode": "loglikelihood", "prompt": prompt, "target": " {{ answer_letter }}",
                                    "continuation": " {{ letter }}"}), encoding="utf-8")
    return path


ITEM = {"id": "p1#1", "task": "belebele", "language": "eng_Latn", "group": "p1", "passage": "A passage.",
        "question": "Why?", "choices": ["a", "b", "c", "d"], "answer": 1}


def render(root, prompt):
    template = load_template("belebele", "probe", root)
    return template.render_prompt({k: v for k, v in ITEM.items() if k != "answer"} | {"letters": list("ABCD")})


@pytest.fixture
def private_file(tmp_path):
    path = tmp_path / "private.txt"
    path.write_text(SECRET_FILE_TEXT, encoding="utf-8")
    return path


ESCAPES = {
    "dunder-attribute": "{{ passage.__class__ }}",
    "subclasses-walk": "{{ passage.__class__.__mro__[1].__subclasses__() }}",
    "attr-filter": "{{ passage|attr('__class__') }}",
    "format-string": "{{ '{0.__class__.__init__.__globals__}'.format(passage) }}",
    "function-globals": "{{ range.__globals__ }}",
    "self-reference": "{{ self.__init__.__globals__ }}",
    "private-attribute": "{{ self._TemplateReference__context }}",
    "namespace-globals": "{{ namespace.__init__.__globals__['os'].system('touch {pwned}') }}",
    "lipsum-globals": "{{ lipsum.__globals__['os'].popen('touch {pwned}').read() }}",
    "cycler-globals": "{{ cycler.__init__.__globals__.os.popen('touch {pwned}').read() }}",
    "type-base": "{{ dict.__base__.__subclasses__() }}",
    "mro-method": "{{ dict.mro() }}",
    "mutate-list": "{{ choices.append('e') }}",
    "mutate-dict": "{% set d = dict(a=1) %}{{ d.update(b=2) }}",
    "huge-exponent": "{{ 9 ** 99999999 }}",
    "huge-string": "{{ passage * 100000000 }}",
    "huge-list": "{{ choices * 100000000 }}",
    "huge-range": "{{ range(10 ** 8)|list|length }}",
    "undefined-open": "{{ open('{private}').read() }}",
    "undefined-import": "{{ __import__('os').system('touch {pwned}') }}",
    "runtime-error": "{{ 1 / 0 }}",
}

LOAD_TIME = {
    "include-file": "{% include '{private}' %}",
    "import-file": "{% import '{private}' as x %}{{ x }}",
    "from-import-file": "{% from '{private}' import y %}{{ y }}",
    "extends-file": "{% extends '{private}' %}",
}


@pytest.mark.parametrize("source", ESCAPES.values(), ids=ESCAPES.keys())
def test_escape_attempt_fails_at_render_and_does_nothing(source, tmp_path, private_file):
    pwned = tmp_path / "pwned"
    path = write_template(tmp_path, source.replace("{pwned}", str(pwned)).replace("{private}", str(private_file)))
    with pytest.raises(TemplateError) as caught:
        render(tmp_path, source)
    message = str(caught.value)
    assert message.startswith(f"{path}: 'prompt'"), message
    assert SECRET_FILE_TEXT not in message
    assert not pwned.exists()


@pytest.mark.parametrize("source", LOAD_TIME.values(), ids=LOAD_TIME.keys())
def test_file_access_is_refused_when_the_template_loads(source, tmp_path, private_file):
    path = write_template(tmp_path, source.replace("{private}", str(private_file)))
    with pytest.raises(TemplateError, match=r"'prompt' line 1: templates may not include, import or extend other files"
                       ) as caught:
        load_template("belebele", "probe", tmp_path)
    assert str(caught.value).startswith(str(path)) and SECRET_FILE_TEXT not in str(caught.value)


def test_ordinary_features_still_work(tmp_path):
    source = ("{% set ns = namespace(n=0) %}{% for c in choices %}{% set ns.n = ns.n + 1 %}{{ letters[loop.index0] }}) "
              "{{ c|upper }}{{ '\n' if not loop.last }}{% endfor %}\n{{ ns.n }} choices; {{ passage|length }} chars; "
              "{{ '%s?'|format(question) }} {{ 2 ** 10 }} {{ '-' * 3 }} {{ range(3)|list }} {{ dict(a=1)['a'] }}")
    write_template(tmp_path, source)
    assert render(tmp_path, source) == ("A) A\nB) B\nC) C\nD) D\n4 choices; 10 chars; Why?? 1024 --- [0, 1, 2] 1")


def test_shipped_templates_still_render(repo_root):
    for name in ["paper", "instruct", "blog"]:
        template = load_template("belebele", name, repo_root)
        plan = prompt_record_for("belebele", "eng_Latn", name, repo_root).fewshot
        items = [{**ITEM, "id": f"p{i}#1", "group": f"p{i}"} for i in range(8)]
        assert build_requests(template, items, items, fewshot=plan, seed=1)


# -- the render budget: every way past the size and time limits ------------------------------------------------

TIME = "the time limit"
SIZE = "the output-size limit"
BYPASSES = {
    "nested-range-loops": ("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", TIME),
    "nested-list-loops": ("{% set l = choices * 25000 %}{% for a in l %}{% for b in l %}{% endfor %}{% endfor %}",
                          TIME),
    "exponential-macro": ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
                          TIME),
    "center-filter": ("{{ passage|center(1000000000) }}", SIZE),
    "center-method": ("{{ passage.center(10 ** 9) }}", SIZE),
    "ljust-method": ("{{ passage.ljust(10 ** 9, '-') }}", SIZE),
    "rjust-method": ("{{ question.rjust(10 ** 8) }}", SIZE),
    "zfill-method": ("{{ '7'.zfill(10 ** 9) }}", SIZE),
    "join-filter": ("{{ range(100000)|join('x' * 100000) }}", SIZE),
    "join-filter-generator": ("{{ range(100000)|map('string')|join(passage * 10000) }}", SIZE),
    "join-method": ("{{ ('y' * 100000).join(range(100000)|map('string')) }}", SIZE),
    "percent-width": ("{{ '%1000000000s' % passage }}", SIZE),
    "percent-star-width": ("{{ '%*s' % (10 ** 9, passage) }}", SIZE),
    "percent-precision": ("{{ '%.1000000000f' % 1.5 }}", SIZE),
    "format-filter-width": ("{{ '%1000000000s'|format(passage) }}", SIZE),
    "format-method-width": ("{{ '{:>1000000000}'.format(passage) }}", SIZE),
    "format-method-nested-width": ("{{ '{:{w}}'.format(passage, w=10 ** 9) }}", SIZE),
    "format-map-width": ("{{ '{x:^999999999}'.format_map({'x': question}) }}", SIZE),
    "replace-filter": ("{{ ('x' * 100000)|replace('x', 'x' * 100000) }}", SIZE),
    "replace-method": ("{{ ('x' * 100000).replace('', 'abc') }}", SIZE),
    "indent-filter": ("{{ ('\n' * 100000)|indent(100000, first=true, blank=true) }}", SIZE),
    "wordwrap-filter": ("{{ ('x ' * 50000)|wordwrap(1, wrapstring='y' * 100000) }}", SIZE),
    "expandtabs-method": ("{{ ('\t' * 100000).expandtabs(100000) }}", SIZE),
    "translate-method": ("{{ ('x' * 100000).translate({120: 'y' * 100000}) }}", SIZE),
    "concat-doubling": ("{% set ns = namespace(s=passage) %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}"
                        "{% endfor %}{{ ns.s|length }}", SIZE),
    "plus-doubling": ("{% set ns = namespace(s=passage) %}{% for i in range(60) %}{% set ns.s = ns.s + ns.s %}"
                      "{% endfor %}", SIZE),
    "list-doubling": ("{% set ns = namespace(l=choices) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}"
                      "{% endfor %}", SIZE),
    "integer-squaring": ("{% set ns = namespace(n=10) %}{% for i in range(60) %}{% set ns.n = ns.n * ns.n %}"
                         "{% endfor %}", SIZE),
    "integer-powers": ("{% set ns = namespace(n=10 ** 60) %}{% for i in range(60) %}{% set ns.n = ns.n ** 60 %}"
                       "{% endfor %}", SIZE),
    "list-growing-by-copies": ("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [i] %}"
                               "{% endfor %}", TIME),
    "set-block-accumulation": ("{% set x %}{% for i in range(100000) %}{{ passage }}{% endfor %}{% endset %}ok",
                               SIZE),
    "literal-text-in-a-loop": ("{% for i in range(100000) %}" + "本文" * 50 + "{% endfor %}", SIZE),
    "filter-block": ("{% filter upper %}{% for i in range(100000) %}{{ question }}{% endfor %}{% endfilter %}", SIZE),
    "printed-nested-list": ("{% set l = choices * 25000 %}{{ [l] * 100000 }}", SIZE),
    "string-filter-nested-list": ("{% set l = choices * 25000 %}{{ ([l] * 100000)|string|length }}", SIZE),
    "tojson-nested-list": ("{% set l = choices * 25000 %}{{ ([l] * 100000)|tojson|length }}", SIZE),
    "sum-of-lists": ("{{ ([choices * 25000] * 100000)|sum(start=[])|length }}", SIZE),
    "batch-fill": ("{{ choices|batch(10 ** 9, 'x')|list }}", SIZE),
    "many-outputs": ("{% for i in range(100000) %}{{ passage }}{{ question }}{% endfor %}", SIZE),
}


@pytest.mark.parametrize("source, limit", BYPASSES.values(), ids=BYPASSES.keys())
def test_no_way_past_the_render_budget(source, limit, tmp_path):
    import time

    path = write_template(tmp_path, source)
    started = time.monotonic()
    with pytest.raises(TemplateError) as caught:
        render(tmp_path, source)
    # a size limit refuses before the value is built (building 1 GB and then refusing would take seconds)
    assert time.monotonic() - started < (20 if limit == TIME else 3)
    message = str(caught.value)
    assert message.startswith(f"{path}: 'prompt' hit {limit}"), message


def test_the_budget_holds_outside_the_main_thread(tmp_path):
    """Snakemake may plan or run a job in any thread: the checks use no signal."""
    import threading

    source = BYPASSES["nested-range-loops"][0]
    write_template(tmp_path, source)
    caught = []

    def attempt():
        try:
            render(tmp_path, source)
        except TemplateError as exc:
            caught.append(str(exc))

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join(30)
    assert caught and "hit the time limit (2 s of CPU time per render)" in caught[0]


def test_large_but_legal_renders_still_work(tmp_path):
    """Big data numbers, long passages and loops within the budget are no problem."""
    source = ("{{ '{:,}'.format(1234567890) }} {{ '%d|%8.3f' % (9876543210, 2.5) }} {{ '%-6s|'|format('ja') }}"
              "{% for c in choices %}{{ letters[loop.index0] ~ ') ' ~ c }}{% endfor %} {{ passage|center(20) }}|"
              "{{ (passage * 5000)|length }} {{ range(1000)|join(',')|length }} {{ question|replace('?', '？') }}")
    write_template(tmp_path, source)
    assert render(tmp_path, source) == ("1,234,567,890 9876543210|   2.500 ja    |A) aB) bC) cD) d      A passage.     |"
                                        "50000 3889 Why？")
