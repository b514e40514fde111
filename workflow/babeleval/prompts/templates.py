"""Prompt templates: one YAML file per template under ``prompts/<task>/<name>.yaml``.

A template file holds the prompt text (Jinja2) and everything that decides how a
model's answer is obtained and read: scoring mode, few-shot count and exemplar
choice, stop sequences, token limit, decoding preset and answer parser. The
format (letters, cloze, instruction) lives here; the task's data lives in the
loaders.

Keys: ``mode`` (loglikelihood | generate); ``prompt`` (one item) and ``target``
(an exemplar's answer, appended after its prompt); ``preamble`` (text before
the exemplars, rendered once: JGLUE's task description or a chat wrapper);
``fewshot`` (``n``, ``sampler``: random | first | stratified, ``language``,
``separator`` between exemplars and before the item, ``allow_fewer``: true where
the protocol accepts fewer exemplars than ``n`` when the pool is smaller, which
the score file then records; otherwise that stops the run); ``continuation`` (the text
scored for each choice, loglikelihood only); ``choices`` (the words a
classification task's labels are shown and scored as, in the task's label
order: JNLI's 含意/矛盾/中立); ``generation`` and ``parser`` (generate only);
``extractor`` (generate only: a params.yaml model that reads the answer where the
parser fails, ``babeleval.score.extraction``); ``metrics`` (what to report, else the task family's defaults);
``description`` and ``reference`` (where the protocol comes from);
``layout`` and ``variations`` (a template family: its format as parts and the
axes its variants vary, see ``babeleval.prompts.variants``); ``protocol`` (the published harness whose
tokens and limits it reproduces: ``babeleval``, the default, ``lm-eval``, ``jp-stable``, ``languagebench``;
see ``babeleval.prompts.protocols``). A name
``<template>~axis=value~...`` loads a variant of ``prompts/<task>/<template>.yaml``.

Tasks of one family share a template by reference: a file holding ``use: <task>/<name>``
is that template, with only its own ``description`` and ``reference`` (the protocol
is the other task's, cited for this one), so no two files repeat one prompt.

Templates render in Jinja's immutable sandbox with strict undefined
variables (``babeleval.prompts.sandbox``): a template cannot reach Python internals,
read files or run code, every render has a time and output-size budget, and a
misspelt variable is an error rather than an empty string.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import jinja2
import jinja2.nodes
import yaml

from ..core.choices import LETTERS, same_label
from ..core.errors import TemplateError
from ..tasks import TASKS
from .sandbox import ENV as _ENV
from .sandbox import RenderLimit, compile_template as _compile, render
from . import variants
from .answer_slot import SlotSpec
from .protocols import DEFAULT as DEFAULT_PROTOCOL, PROTOCOLS, Protocol

PROMPTS_DIR = "prompts"
MODES = ("loglikelihood", "generate")
SAMPLERS = ("random", "first", "stratified")

_FILE_NODES = (jinja2.nodes.Include, jinja2.nodes.Import, jinja2.nodes.FromImport, jinja2.nodes.Extends)

_TOP_KEYS = {"description", "reference", "protocol", "mode", "fewshot", "preamble", "prompt", "target", "continuation",
             "choices", "choice_labels", "answer_slot", "generation", "parser", "extractor", "metrics", "layout",
             "variations"}
_FEWSHOT_KEYS = {"n", "sampler", "language", "separator", "allow_fewer"}
_GENERATION_KEYS = {"decoding", "max_new_tokens", "stop"}
_USING_KEYS = {"use", "description", "reference"}  # all a file that uses another task's template may set


@dataclass(frozen=True)
class FewShot:
    n: int = 0
    sampler: str = "random"
    language: str | None = None  # draw exemplars from this language instead of the item's own
    separator: str = "\n\n"
    allow_fewer: bool = False  # a pool smaller than n gives fewer exemplars (recorded) instead of an error


@dataclass(frozen=True)
class Generation:
    decoding: str = "greedy"
    max_new_tokens: int = 32
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Template:
    task: str
    name: str
    path: Path
    mode: str
    prompt: str
    target: str
    description: str = ""
    reference: str = ""
    continuation: str | None = None
    parser: str | None = None
    preamble: str = ""                    # text before the exemplars and the item (JGLUE's DESCRIPTION)
    choices: tuple[str, ...] | None = None  # the words a label task's classes are scored or read as
    metrics: tuple[str, ...] | None = None  # what to report; None = the task family's defaults
    fewshot: FewShot = field(default_factory=FewShot)
    generation: Generation = field(default_factory=Generation)
    protocol: Protocol = PROTOCOLS[DEFAULT_PROTOCOL]  # the harness whose tokens and limits it reproduces
    sha256: str = ""
    variant: variants.Variant | None = None  # a variant name's settings (base~axis=value), else None
    uses: Path | None = None  # the template file this one uses (``use: <task>/<name>``), else None
    labels: tuple[str, ...] | None = None  # ``choice_labels``: the options' labels, else A, B, C ...
    answer_slot: SlotSpec | None = None  # constrained answers (opt-in), else None
    # a params.yaml model that reads the answer where the rule parsers fail (opt-in; babeleval.score.extraction)
    extractor: str | None = None

    def choice_labels(self, n: int, language: str | None = None) -> list[str]:
        """The labels of ``n`` choices, in order: what the prompt shows, the letter parser reads and the score
        names. A variant's enumerators (bound to ``language``), else the template's ``choice_labels``, else A, B,
        C ... The one owner of a template's labels: render, parse and score all ask it."""
        if self.variant is not None:
            variant = self.variant if self.variant.language or language is None else self.variant.bound(language)
            return variant.enumerators(n)
        labels = self.labels if self.labels is not None else tuple(LETTERS)
        if n > len(labels):
            raise TemplateError(f"{self.path}: an item has {n} choices and 'choice_labels' names {len(labels)}; "
                                "give a label for every choice")
        return list(labels[:n])

    def render_preamble(self, variables: dict[str, Any]) -> str:
        return self._render("preamble", self.preamble, variables) if self.preamble else ""

    def render_prompt(self, variables: dict[str, Any]) -> str:
        return self._render("prompt", self.prompt, variables)

    def render_target(self, variables: dict[str, Any]) -> str:
        return self._render("target", self.target, variables)

    def render_continuation(self, variables: dict[str, Any]) -> str:
        assert self.continuation is not None
        return self._render("continuation", self.continuation, variables)

    def _render(self, key: str, source: str, variables: dict[str, Any]) -> str:
        try:
            return render(source, variables)
        except RenderLimit as exc:
            raise TemplateError(f"{self.path}: '{key}' hit {exc} (see docs/security.md)") from None
        except jinja2.exceptions.SecurityError as exc:
            raise TemplateError(f"{self.path}: '{key}' tried something templates may not do: {exc}") from None
        except jinja2.exceptions.UndefinedError as exc:
            known = ", ".join(sorted(variables))
            raise TemplateError(f"{self.path}: '{key}': {exc.message}; variables available: {known}") from None
        except jinja2.exceptions.TemplateError as exc:
            raise TemplateError(f"{self.path}: '{key}': {exc}") from None
        except Exception as exc:  # 1/0, 'a' + 1, a huge range: the template's fault, said as such
            raise TemplateError(f"{self.path}: '{key}': {type(exc).__name__}: {exc}") from None


def template_path(task: str, name: str, root: str | Path = ".") -> Path:
    """A template's file: ``prompts/<task>/<name>.yaml``; an lm-eval task's one template is the file that passes
    lm-eval's own rendering through (``babeleval.tasks.lmeval``)."""
    own = getattr(TASKS.get(task), "template_file", None)
    if own is not None:
        return Path(root) / own
    return Path(root) / PROMPTS_DIR / task / f"{name}.yaml"


def task_settings(task: str) -> dict[str, Any]:
    """Template keys a task sets itself rather than its template file: an lm-eval task's generation settings, taken
    from lm-eval's task config (``babeleval.tasks.lmeval``); none for any other task."""
    own = getattr(TASKS.get(task), "template_settings", None)
    return own() if own is not None else {}


def available_templates(task: str, root: str | Path = ".") -> list[str]:
    return sorted(p.stem for p in (Path(root) / PROMPTS_DIR / task).glob("*.yaml"))


def template_fields(task: str, name: str, root: str | Path = ".") -> tuple[dict, Path]:
    """The mapping in a template file (with the template it uses, if it uses one), and its path."""
    return _read_fields(template_path(task, name, root), task, name, root)[:2]


def _read_fields(path: Path, task: str, name: str, root: str | Path) -> tuple[dict, Path, bytes, Path | None]:
    """The template's mapping, its path, the bytes its hash covers, and the file it uses (or None)."""
    fields, raw = _read_file(path, task, name, root)
    settings = task_settings(task)
    if settings:  # the task's own (an lm-eval task's generation_kwargs): in the hash, as the file's text is
        fields = {**fields, **settings}
        raw += b"\0" + json.dumps(settings, sort_keys=True).encode("utf-8")
    if "use" not in fields:
        return fields, path, raw, None
    used, used_fields, used_raw = _used_template(path, task, fields, root)
    # the hash covers both files: editing the used template changes every template that uses it
    return {**used_fields, **{k: v for k, v in fields.items() if k != "use"}}, path, raw + b"\0" + used_raw, used


def _used_template(path: Path, task: str, fields: dict, root: str | Path) -> tuple[Path, dict, bytes]:
    """The template a ``use: <task>/<name>`` file refers to: of a task of the same family, using none itself."""
    _check_keys(path, "a template that uses another", fields, _USING_KEYS)
    ref = fields["use"]
    other_task, _, other_name = ref.partition("/") if isinstance(ref, str) else ("", "", "")
    if not other_name or other_task not in TASKS or other_task == task:
        raise TemplateError(f"{path}: 'use' must name another task's template as <task>/<name> "
                            f"(tasks: {', '.join(sorted(set(TASKS) - {task}))}), got {ref!r}")
    if task in TASKS and TASKS[other_task].FAMILY != TASKS[task].FAMILY:
        raise TemplateError(f"{path}: 'use: {ref}': a {TASKS[other_task].FAMILY} template cannot serve a "
                            f"{TASKS[task].FAMILY} task")
    used = template_path(other_task, other_name, root)
    used_fields, used_raw = _read_file(used, other_task, other_name, root)
    if "use" in used_fields:
        raise TemplateError(f"{path}: 'use: {ref}': {used} uses another template itself; use that one directly")
    return used, used_fields, used_raw


def _read_file(path: Path, task: str, name: str, root: str | Path) -> tuple[dict, bytes]:
    if not path.is_file():
        known = ", ".join(available_templates(task, root)) or "none"
        raise TemplateError(f"{path}: no template '{name}' for task '{task}' (available: {known})")
    raw = path.read_bytes()
    try:
        fields = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TemplateError(f"{path}: not a valid YAML file: {exc}") from None
    if not isinstance(fields, dict):
        raise TemplateError(f"{path}: expected a mapping of template keys")
    return fields, raw


def load_template(task: str, name: str, root: str | Path = ".") -> Template:
    base, settings = variants.split_name(name)
    fields, path, raw, used = _read_fields(template_path(task, base, root), task, base, root)
    digest = hashlib.sha256(raw).hexdigest()
    if not settings and "layout" not in fields and "variations" not in fields:
        return replace(_from_fields(task, name, path, fields, digest), uses=used)
    fields, variant = variants.expand_fields(fields, settings, name, path)
    digest = hashlib.sha256(raw + b"\0" + name.encode("utf-8")).hexdigest()
    return replace(_from_fields(task, name, path, fields, digest), variant=variant, uses=used)


def _check_keys(path: Path, where: str, fields: dict, allowed: set[str]) -> None:
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise TemplateError(f"{path}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
                            f" in {where} (allowed: {', '.join(sorted(allowed))})")


def _require(path: Path, fields: dict, key: str, kind: type) -> Any:
    if key not in fields:
        raise TemplateError(f"{path}: missing required key '{key}'")
    if not isinstance(fields[key], kind):
        raise TemplateError(f"{path}: '{key}' must be a {kind.__name__}, got {type(fields[key]).__name__}")
    return fields[key]


def _from_fields(task: str, name: str, path: Path, fields: dict, digest: str) -> Template:
    _check_keys(path, "the template", fields, _TOP_KEYS)
    mode = _require(path, fields, "mode", str)
    if mode not in MODES:
        raise TemplateError(f"{path}: mode '{mode}' is not one of {', '.join(MODES)}")
    prompt = _require(path, fields, "prompt", str)
    target = _require(path, fields, "target", str)

    fewshot = _fewshot(path, fields)

    continuation = fields.get("continuation")
    parser = fields.get("parser")
    preamble = fields.get("preamble", "")
    if not isinstance(preamble, str):
        raise TemplateError(f"{path}: 'preamble' must be a string")
    choices = fields.get("choices")
    if choices is not None:
        if not isinstance(choices, list) or not choices or not all(isinstance(c, str) and c for c in choices):
            raise TemplateError(f"{path}: 'choices' must be a list of non-empty strings (one per class, in the task's label order)")
        choices = tuple(choices)
    metrics = _metrics(path, fields)
    generation = _generation(path, fields, mode, continuation, parser)
    labels = _choice_labels(path, fields)
    answer_slot = SlotSpec.from_fields(fields.get("answer_slot"), path)
    if answer_slot is not None and mode != "generate":
        raise TemplateError(f"{path}: 'answer_slot' constrains a generated answer; a {mode} template has none")
    extractor = _extractor(path, fields, mode)

    template = Template(
        task=task, name=name, path=path, mode=mode, prompt=prompt, target=target,
        description=str(fields.get("description", "")).strip(), reference=str(fields.get("reference", "")).strip(),
        continuation=continuation, parser=parser, fewshot=fewshot, generation=generation, sha256=digest,
        preamble=preamble, choices=choices, metrics=metrics, protocol=_protocol(path, fields), labels=labels,
        answer_slot=answer_slot, extractor=extractor,
    )
    for key, source in (("preamble", preamble), ("prompt", prompt), ("target", target), ("continuation", continuation)):
        if source is not None:
            _check_jinja(path, key, source)
    return template


def _choice_labels(path: Path, fields: dict) -> tuple[str, ...] | None:
    """The template's ``choice_labels``: distinct non-empty strings, distinct still after Unicode (NFKC), case and
    whitespace normalisation, as the parser compares them."""
    labels = fields.get("choice_labels")
    if labels is None:
        return None
    if not isinstance(labels, list) or len(labels) < 2 or not all(isinstance(x, str) and x.strip() for x in labels):
        raise TemplateError(f"{path}: 'choice_labels' must be a list of at least two non-empty strings, one per "
                            "choice in order (e.g. [ক, খ, গ, ঘ])")
    for i, label in enumerate(labels):
        for other in labels[:i]:
            if same_label(label, other):
                raise TemplateError(f"{path}: 'choice_labels' names {other!r} and {label!r}, which read as the same "
                                    "label; give each choice its own")
    return tuple(label.strip() for label in labels)


def _extractor(path: Path, fields: dict, mode: str) -> str | None:
    """The ``extractor``: the name of a params.yaml model (that it is one is checked with the grid,
    ``babeleval.grid.entries``), for a generated answer only."""
    name = fields.get("extractor")
    if name is None:
        return None
    if mode != "generate":
        raise TemplateError(f"{path}: 'extractor' reads a generated answer; a {mode} template has none")
    if not isinstance(name, str) or not name.strip():
        raise TemplateError(f"{path}: 'extractor' must name a model of params.yaml `models`, got {name!r}")
    return name.strip()


def _protocol(path: Path, fields: dict) -> Protocol:
    name = fields.get("protocol", DEFAULT_PROTOCOL)
    if name not in PROTOCOLS:
        raise TemplateError(f"{path}: protocol {name!r} is not one of {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def _fewshot(path: Path, fields: dict) -> FewShot:
    fewshot_fields = fields.get("fewshot") or {}
    if not isinstance(fewshot_fields, dict):
        raise TemplateError(f"{path}: 'fewshot' must be a mapping")
    _check_keys(path, "'fewshot'", fewshot_fields, _FEWSHOT_KEYS)
    fewshot = FewShot(**fewshot_fields)
    if not isinstance(fewshot.n, int) or fewshot.n < 0:
        raise TemplateError(f"{path}: fewshot.n must be a whole number >= 0")
    if not isinstance(fewshot.allow_fewer, bool):
        raise TemplateError(f"{path}: fewshot.allow_fewer must be true or false")
    if fewshot.sampler not in SAMPLERS:
        raise TemplateError(f"{path}: fewshot.sampler '{fewshot.sampler}' is not one of {', '.join(SAMPLERS)}")
    return fewshot


def _metrics(path: Path, fields: dict) -> tuple[str, ...] | None:
    """The metric names a template lists; whether a task's family can report them is checked with the grid
    (``babeleval.grid.entries.check_template``), where the metric registry is known."""
    metrics = fields.get("metrics")
    if metrics is not None:
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            raise TemplateError(f"{path}: 'metrics' must be a list of metric names")
        metrics = tuple(metrics)
    return metrics


def _generation(path: Path, fields: dict, mode: str, continuation: Any, parser: Any) -> Generation:
    """The generation settings of a generate template (defaults for a loglikelihood one), with the keys each mode refuses."""
    generation = Generation()
    if mode == "loglikelihood":
        if not isinstance(continuation, str):
            raise TemplateError(f"{path}: a loglikelihood template needs 'continuation' (the text scored for each choice)")
        if parser is not None or "generation" in fields:
            raise TemplateError(f"{path}: 'parser' and 'generation' apply to generate templates only")
    else:
        if continuation is not None:
            raise TemplateError(f"{path}: 'continuation' applies to loglikelihood templates only")
        if not isinstance(parser, str):
            raise TemplateError(f"{path}: a generate template needs 'parser' (the name of an answer parser)")
        generation_fields = _require(path, fields, "generation", dict)
        _check_keys(path, "'generation'", generation_fields, _GENERATION_KEYS)
        stop = generation_fields.get("stop", [])
        if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
            raise TemplateError(f"{path}: generation.stop must be a list of non-empty strings")
        generation = Generation(
            decoding=generation_fields.get("decoding", "greedy"),
            max_new_tokens=generation_fields.get("max_new_tokens", 32),
            stop=tuple(stop),
        )
        if not isinstance(generation.max_new_tokens, int) or generation.max_new_tokens < 1:
            raise TemplateError(f"{path}: generation.max_new_tokens must be a whole number >= 1")
    return generation


def _check_jinja(path: Path, key: str, source: str) -> None:
    """A template text compiles and stands alone (no include, import or extends)."""
    try:
        tree = _ENV.parse(source)
        _compile(source)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise TemplateError(f"{path}: '{key}' line {exc.lineno}: template syntax error: {exc.message}") from None
    for node in tree.find_all(_FILE_NODES):
        raise TemplateError(f"{path}: '{key}' line {node.lineno}: templates may not include, import or "
                            f"extend other files (a template is one self-contained text)")
