"""Templates render in a sandbox: they cannot reach Python internals, read files or run code.

Each attempt fails with a TemplateError naming the template file and key, and does nothing: no file is read
or written, no command runs. Ordinary template features keep working.
"""

from __future__ import annotations

import pytest
import yaml

from babeleval.errors import TemplateError
from babeleval.render import build_requests
from babeleval.templates import load_template

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
        items = [{**ITEM, "id": f"p{i}#1", "group": f"p{i}"} for i in range(8)]
        assert build_requests(template, items, items, seed=1)
