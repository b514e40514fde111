"""Prompt variants: one template file expanded into named formats along declared axes.

A variant is named after its base template and the settings that differ from the
defaults, in a fixed axis order: ``formatspread~enum=num~sep=dash``. The name is
the whole description, so the same name always means the same prompts, two names
never mean the same variant (a default value or an axis out of order is refused
with the canonical name), and a variant is a template like any other: its own
file targets, hash and ``show`` preview.

Axes (defaults first):

==========  ==================================================  ==========================
axis        values                                              applies to
==========  ==================================================  ==========================
enum        upper (A B C D), lower (a b c d), num (1 2 3 4),    templates with a ``layout``
            native (the script's own: ア イ ウ エ, क ख ग घ ...)
sep         colon ": ", dash " - ", newline ":\\n", space " "   templates with a ``layout``
choice      colon "A: ", dot "A. ", paren "(A) ", close "A) ",  templates with a ``layout``
            bracket "[A] "
space       nl (fields on lines), nl2 (blank line between),     templates with a ``layout``
            sp (one line), bar (" | ")
case        asis, upper, lower (field labels)                   templates with a ``layout``
instr       none, en, tgt (instruction and labels in the        templates with a ``layout``
            evaluated language, from instruction_phrases.yaml)
order       orig, rev, p<k> (a seeded permutation per item)     every choice template
shots       the number of exemplars (default: the file's)      every template
shotorder   orig, rev, p<k> (exemplars in a seeded order)       every template
==========  ==================================================  ==========================

A ``layout`` template describes its format as parts (fields with labels, the
lettered choices, the answer label) instead of a ``prompt`` text; its variants
rewrite those parts. Choice order permutes each item's choices and remaps the
gold; enumerators change both what the prompt shows and what is scored: the
continuations (log-likelihood) and the labels the letter parser reads (generate: they are the template's
``choice_labels``, ``babeleval.prompts.templates.Template.choice_labels``).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

from ..core.choices import LETTERS
from ..core.errors import TemplateError

PHRASES_FILE = Path(__file__).resolve().parent / "instruction_phrases.yaml"

NAME_SEPARATOR = "~"

ENUMERATORS = {
    "upper": LETTERS,
    "lower": "abcdefghijklmnopqrstuvwxyz",
}
# A script's own enumerators, where it has a conventional sequence for lettered options.
NATIVE_ENUMERATORS = {
    "Jpan": "アイウエオカキクケコ",
    "Deva": "कखगघङचछजझ",
    "Arab": "أبجدهوزحطي",
    "Thai": "กขคงจฉชซฌญ",
    "Cyrl": "АБВГДЕЖЗИК",
    "Hang": "가나다라마바사아자",
    "Hans": "甲乙丙丁戊己庚辛壬癸",
    "Hant": "甲乙丙丁戊己庚辛壬癸",
    "Grek": "ΑΒΓΔΕΖΗΘΙΚ",
    "Hebr": "אבגדהוזחטי",
    "Beng": "কখগঘঙচছজঝ",
}
SEPARATORS = {"colon": ": ", "dash": " - ", "newline": ":\n", "space": " "}
CHOICE_FORMATS = {"colon": "{}: ", "dot": "{}. ", "paren": "({}) ", "close": "{}) ", "bracket": "[{}] "}
SPACES = {"nl": "\n", "nl2": "\n\n", "sp": " ", "bar": " | "}
CASES = ("asis", "upper", "lower")
INSTRUCTIONS = ("none", "en", "tgt")
_PERMUTATION = re.compile(r"^(orig|rev|p[1-9][0-9]{0,3})$")

LAYOUT_AXES = ("enum", "sep", "choice", "space", "case", "instr")
ANY_AXES = ("order", "shots", "shotorder")
AXES = LAYOUT_AXES + ANY_AXES  # the canonical order of settings in a name
AXIS_DEFAULTS = {"enum": "upper", "sep": "colon", "choice": "colon", "space": "nl", "case": "asis", "instr": "none",
            "order": "orig", "shotorder": "orig"}  # shots: the file's fewshot.n
_FIXED_VALUES = {"enum": ("upper", "lower", "num", "native"), "sep": tuple(SEPARATORS),
                 "choice": tuple(CHOICE_FORMATS), "space": tuple(SPACES), "case": CASES, "instr": INSTRUCTIONS}


def base_name(name: str) -> str:
    """The base template a template name belongs to: itself, or the template a variant was made from. A base
    template and its variants in a grid form a variant set, named after the base."""
    return name.split(NAME_SEPARATOR)[0]


def is_variant(name: str) -> bool:
    return NAME_SEPARATOR in name


def split_name(name: str) -> tuple[str, dict[str, str]]:
    """``base~axis=value~...`` -> (base, {axis: value}); the grammar only, values are checked later."""
    base, *parts = name.split(NAME_SEPARATOR)
    settings: dict[str, str] = {}
    for part in parts:
        axis, eq, value = part.partition("=")
        if not eq or not axis or not value:
            raise TemplateError(f"template '{name}': '{part}' is not axis=value (e.g. {base}~enum=num)")
        if axis in settings:
            raise TemplateError(f"template '{name}': axis '{axis}' is set twice")
        settings[axis] = value
    return base, settings


def variant_name(base: str, settings: dict[str, str]) -> str:
    """The canonical name: the settings that differ from the defaults, in the fixed axis order."""
    return NAME_SEPARATOR.join([base] + [f"{axis}={settings[axis]}" for axis in AXES if axis in settings])


def check_value(axis: str, value: str, where: str) -> None:
    if axis in _FIXED_VALUES:
        if value not in _FIXED_VALUES[axis]:
            raise TemplateError(f"{where}: {axis}={value} is not a known value (known: {', '.join(_FIXED_VALUES[axis])})")
    elif axis in ("order", "shotorder"):
        if not _PERMUTATION.match(value):
            raise TemplateError(f"{where}: {axis}={value}: expected orig, rev or p<k> (a seeded permutation, k = 1..9999)")
    elif axis == "shots":
        if not value.isdigit() or (len(value) > 1 and value.startswith("0")):
            raise TemplateError(f"{where}: shots={value}: expected a whole number of exemplars")
    else:
        raise TemplateError(f"{where}: unknown variation axis '{axis}' (axes: {', '.join(AXES)})")


def canonical_settings(fields: dict, settings: dict[str, str], name: str, path: Path) -> dict[str, str]:
    """The settings of a variant name, checked against the template; an equivalent non-canonical name is refused."""
    where = f"{path}: variant '{name}'"
    layout = "layout" in fields
    for axis, value in settings.items():
        check_value(axis, value, where)
        if axis in LAYOUT_AXES and not layout:
            raise TemplateError(f"{where}: axis '{axis}' rewrites a template's format and needs a 'layout' "
                                f"(this template has a fixed prompt text; it takes {', '.join(ANY_AXES)})")
    defaults = {**AXIS_DEFAULTS, "shots": str((fields.get("fewshot") or {}).get("n", 0))}
    kept = {axis: value for axis, value in settings.items() if value != defaults[axis]}
    canonical = variant_name(base_name(name), kept)
    if canonical != name:
        raise TemplateError(f"{where}: write it as '{canonical}' (default settings are left out and axes come in "
                            f"the order {', '.join(AXES)}), so that one variant has one name")
    return kept


@lru_cache(maxsize=1)
def phrase_table() -> dict[str, dict[str, str]]:
    return yaml.safe_load(PHRASES_FILE.read_text(encoding="utf-8"))


# -- the variant's effect on items, exemplars and what the prompt shows ------------------------------------


def _permutation(value: str, n: int, *key: str) -> list[int]:
    """The order in which ``n`` things are shown: identity, reversed, or seeded by (value, key) only."""
    order = list(range(n))
    if value == "rev":
        return order[::-1]
    if value.startswith("p"):
        digest = hashlib.sha256("\x1f".join([value, *key]).encode("utf-8")).digest()
        random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


@dataclass(frozen=True)
class Variant:
    """A template's variation settings, bound to the evaluated language when prompts are built or scored."""

    settings: tuple[tuple[str, str], ...]
    layout_labels: tuple[tuple[str, str, str | None], ...] = ()  # (key, English label, phrase key)
    language: str | None = None

    def get(self, axis: str) -> str:
        return dict(self.settings).get(axis, AXIS_DEFAULTS.get(axis, ""))

    def bound(self, language: str) -> "Variant":
        return replace(self, language=language)

    # choices and exemplars

    def permute_item(self, item: dict[str, Any]) -> dict[str, Any]:
        """The item with its choices in the variant's order and the gold index remapped to the new position."""
        order = self.get("order")
        choices = item.get("choices")
        if order == "orig" or not isinstance(choices, list):
            return item
        shown = _permutation(order, len(choices), str(item.get("task", "")), str(item["id"]))
        out = {**item, "choices": [choices[i] for i in shown], "choice_order": shown}
        if isinstance(item.get("answer"), int):
            out["answer"] = shown.index(item["answer"])
        return out

    def order_exemplars(self, exemplars: list[dict[str, Any]], item: dict[str, Any]) -> list[dict[str, Any]]:
        shown = _permutation(self.get("shotorder"), len(exemplars), "shots", str(item["id"]))
        return [exemplars[i] for i in shown]

    # what the prompt shows

    def enumerators(self, n: int) -> list[str]:
        """The answer labels of ``n`` choices in the bound language (native falls back to A, B, C ... where the
        script has no sequence of its own)."""
        enum = self.get("enum")
        if enum == "num":
            return [str(i + 1) for i in range(n)]
        if enum == "native":
            script = (self.language or "").rpartition("_")[2]
            own = NATIVE_ENUMERATORS.get(script)
            if own and len(own) >= n:
                return list(own[:n])
            enum = "upper"
        return list(ENUMERATORS[enum][:n])

    def phrases(self) -> dict[str, str]:
        instr = self.get("instr")
        if instr == "none":
            return {}
        language = "eng_Latn" if instr == "en" else self.language
        table = phrase_table()
        if language not in table:
            raise TemplateError(f"{PHRASES_FILE}: no phrases for language '{language}' (needed by instr=tgt); "
                                "add its instruction and labels there, or leave instr=tgt out of the grid")
        return table[language]

    def variables(self, n_choices: int) -> dict[str, Any]:
        """Variables a layout's generated text uses; ``letters`` replaces the default A, B, C ... everywhere."""
        letters = self.enumerators(n_choices)
        phrases = self.phrases()
        labels = {key: _case(phrases.get(phrase or "", label) if phrases else label, self.get("case"))
                  for key, label, phrase in self.layout_labels}
        instruction = phrases.get("instruction", "").replace("{enumerators}", "/".join(letters)) if phrases else ""
        prefix = CHOICE_FORMATS[self.get("choice")]
        return {"letters": letters, "field_label": labels, "instruction": instruction,
                "choice_prefix": [prefix.format(letter) for letter in letters]}


def bind(template, items: Sequence[dict[str, Any]], pool: Sequence[dict[str, Any]]):
    """A variant template bound to the evaluated language, with its items and exemplar pool in its choice order."""
    language = items[0]["language"] if items else None
    variant = template.variant.bound(language)
    return (replace(template, variant=variant), [variant.permute_item(item) for item in items],
            [variant.permute_item(row) for row in pool])


def input_files(template) -> list[str]:
    """Files a template's prompts are made from: its own (and the one it uses), and the phrase table where a
    variant uses it."""
    files = [str(template.path)] + ([str(template.uses)] if template.uses is not None else [])
    if template.variant is not None and template.variant.get("instr") != "none":
        files.append(str(PHRASES_FILE))
    return files


def _case(text: str, case: str) -> str:
    return text.upper() if case == "upper" else text.lower() if case == "lower" else text


# -- a layout template's generated text ----------------------------------------------------------------


_LAYOUT_KEYS = {"fields", "answer", "choices"}


def _layout_labels(layout: dict, path: Path) -> tuple[tuple[str, str, str | None], ...]:
    if not isinstance(layout, dict):
        raise TemplateError(f"{path}: 'layout' must be a mapping with fields, answer (and choices)")
    unknown = sorted(set(layout) - _LAYOUT_KEYS)
    if unknown:
        raise TemplateError(f"{path}: unknown key(s) {', '.join(unknown)} in 'layout' (allowed: {', '.join(sorted(_LAYOUT_KEYS))})")
    fields = layout.get("fields")
    if not isinstance(fields, list) or not fields:
        raise TemplateError(f"{path}: layout.fields must be a list of {{value, label, phrase}} entries")
    labels = []
    for number, entry in enumerate(fields, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), str) or not isinstance(entry.get("label"), str):
            raise TemplateError(f"{path}: layout.fields entry {number} needs 'value' (an item field) and 'label'")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", entry["value"]):
            raise TemplateError(f"{path}: layout.fields entry {number}: value '{entry['value']}' is not a field name")
        labels.append((entry["value"], entry["label"], entry.get("phrase")))
    answer = layout.get("answer")
    if not isinstance(answer, dict) or not isinstance(answer.get("label"), str):
        raise TemplateError(f"{path}: layout.answer needs a 'label' (the text before the answer, e.g. Answer)")
    labels.append(("answer", answer["label"], answer.get("phrase")))
    return tuple(labels)


def _layout_text(layout: dict, settings: dict[str, str], mode: str) -> dict[str, str]:
    """prompt, target and continuation of a layout under the settings (Jinja text; labels come as variables)."""
    sep = SEPARATORS[settings.get("sep", AXIS_DEFAULTS["sep"])]
    space = SPACES[settings.get("space", AXIS_DEFAULTS["space"])]
    parts = []
    if settings.get("instr", "none") != "none":
        parts.append("{{ instruction }}")
    for entry in layout["fields"]:
        parts.append(f"{{{{ field_label.{entry['value']} }}}}{sep}{{{{ {entry['value']} }}}}")
    if layout.get("choices", True):
        parts.append("{% for choice in choices %}{{ choice_prefix[loop.index0] }}{{ choice }}"
                     f"{{% if not loop.last %}}{space}{{% endif %}}{{% endfor %}}")
    parts.append("{{ field_label.answer }}" + sep.rstrip())
    text = {"prompt": space.join(parts), "target": " {{ answer_letter }}"}
    if mode == "loglikelihood":
        text["continuation"] = " {{ letter }}"
    return text


def expand_fields(fields: dict, settings: dict[str, str], name: str, path: Path) -> tuple[dict, Variant]:
    """A template file's fields with a variant's settings applied: a plain template fields and the Variant."""
    kept = canonical_settings(fields, settings, name, path)
    out = {key: value for key, value in fields.items() if key not in ("variations", "layout")}
    labels: tuple = ()
    if "layout" in fields:
        if "prompt" in fields or "target" in fields or "continuation" in fields:
            raise TemplateError(f"{path}: a template with a 'layout' has its prompt, target and continuation "
                                "generated from it; remove those keys")
        labels = _layout_labels(fields["layout"], path)
        out.update(_layout_text(fields["layout"], kept, fields.get("mode", "")))
    if "shots" in kept:
        out["fewshot"] = {**(fields.get("fewshot") or {}), "n": int(kept["shots"])}
    if "variations" in fields:
        declared_axes(fields, path)  # a misspelt axis in the file is an error even when the name does not use it
    return out, Variant(settings=tuple(sorted(kept.items(), key=lambda kv: AXES.index(kv[0]))), layout_labels=labels)


def declared_axes(fields: dict, path: Path) -> dict[str, list[str]]:
    """The values each axis of the file's ``variations:`` may take, checked; the default first."""
    declared = fields.get("variations") or {}
    if not isinstance(declared, dict):
        raise TemplateError(f"{path}: 'variations' must map axis names to lists of values")
    shots_default = str((fields.get("fewshot") or {}).get("n", 0))
    out = {}
    for axis, values in declared.items():
        if axis not in AXES:
            raise TemplateError(f"{path}: variations: unknown axis '{axis}' (axes: {', '.join(AXES)})")
        if axis in LAYOUT_AXES and "layout" not in fields:
            raise TemplateError(f"{path}: variations.{axis} needs a 'layout' (the template's format as parts)")
        if not isinstance(values, list) or not values:
            raise TemplateError(f"{path}: variations.{axis} must be a non-empty list of values")
        values = [str(v) for v in values]
        for value in values:
            check_value(axis, value, f"{path}: variations.{axis}")
        default = shots_default if axis == "shots" else AXIS_DEFAULTS[axis]
        out[axis] = [default] + [v for v in dict.fromkeys(values) if v != default]
    return out


# -- the grid's variants: sampled or all ---------------------------------------------------------------


def _point(index: int, names: list[str], axes: dict[str, list[str]]) -> dict[str, str]:
    """The settings at ``index`` of the axes' product (mixed radix); digit 0 is an axis's default, left out."""
    point = {}
    for axis in reversed(names):
        index, digit = divmod(index, len(axes[axis]))
        if digit:
            point[axis] = axes[axis][digit]
    return point


def sample_settings(axes: dict[str, list[str]], k: int | None, seed: int, *key: str,
                    skip: Callable[[dict[str, str]], bool] = lambda point: False) -> list[dict[str, str]]:
    """``k`` distinct points of the axes' product besides the defaults (all points when k is None),
    reproducibly from (seed, key), leaving out those ``skip`` refuses (variants the grid lists by name).

    Points are drawn by index into the product, so a space of millions of variants is sampled without
    listing it; the draw order is fixed by the seed, and the points come back in product order.
    """
    names = [axis for axis in AXES if axis in axes]
    total = 1
    for axis in names:
        total *= len(axes[axis])
    if k is None:
        return [_point(index, names, axes) for index in range(total)]
    digest = hashlib.sha256("\x1f".join([str(seed), "variants", *key]).encode("utf-8")).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    chosen: list[int] = []
    remaining = total - 1
    drawn: set[int] = set()
    while len(chosen) < k and len(drawn) < remaining:
        index = rng.randrange(1, total)  # index 0 is the defaults: the base template, listed by name if wanted
        if index in drawn:
            continue
        drawn.add(index)
        if not skip(_point(index, names, axes)):
            chosen.append(index)
    return [_point(index, names, axes) for index in sorted(chosen)]
