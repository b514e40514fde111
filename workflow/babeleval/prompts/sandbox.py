"""The environment prompt templates render in: no file access, no Python internals, and a budget.

Jinja's immutable sandbox already refuses attributes that lead to Python
internals (``__class__``, ``__globals__``, ``mro`` ...) and methods that mutate
data. Here templates also lose the loader (no ``include`` of a file), and every
render runs inside a budget that no filter, method, operator or loop can get
past:

- **output size**: no render, and no value built while rendering, may exceed
  ``MAX_OUTPUT`` characters (or items). Operations that could build a large
  value are checked *before* they run: ``*`` and ``+`` on strings and lists,
  ``%`` and ``format`` with their widths and precisions, ``center``/``ljust``/
  ``rjust``/``zfill``/``expandtabs``, ``join``, ``replace``, ``indent``,
  ``wordwrap``, ``translate``, ``sum``, and any whole-number argument larger
  than the limit. Text a template emits is counted as it is produced, in
  ``{{ }}`` outputs (also inside ``set`` blocks, macros and filter blocks) and
  in the literal text of every loop iteration.
- **time**: ``TIME_LIMIT`` seconds of CPU time per render. The clock is
  checked at every loop iteration, call, filter and intercepted operator, so
  nested loops that output nothing, recursion through macros and repeated
  concatenation all stop. The check runs in whatever thread renders (no
  signals), so it holds in Snakemake's planning process too.

A template that hits a limit fails with :class:`RenderLimit`, which the
template layer reports with the file, the key and the limit.
"""

from __future__ import annotations

import contextvars
import functools
import re
import string
import time
from typing import Any, Iterable, Iterator

import jinja2
import jinja2.nodes as nodes
from jinja2.runtime import Context, EvalContext
from jinja2.sandbox import ImmutableSandboxedEnvironment

MAX_OUTPUT = 100_000   # characters (or items) a render, or any value built in it, may reach
MAX_REPEAT = MAX_OUTPUT  # longest string or list a template may build with '*'
MAX_EXPONENT = 64      # largest exponent a template may use with '**'
MAX_INT_BITS = 4096    # largest whole number a template may build with '*'
TIME_LIMIT = 2.0       # seconds of CPU time per render


class RenderLimit(Exception):
    """A render went over its budget; the message names the limit and what hit it."""


# Ticks between reads of the thread's CPU clock. A read is a system call (about 2 us here) and a render ticks at
# every output, loop step and call, hundreds of times per item: reading it at each tick (and at each render's
# start) was most of the CPU time of rendering a large task. A tick is a small step, so the clock starts at the
# first read and a render overruns its limit by the microseconds of at most twice this many ticks.
CLOCK_EVERY = 64


class _Budget:
    def __init__(self, seconds: float):
        self.deadline: float | None = None  # set at the first read of the clock: most renders end before it
        self.seconds = seconds
        self.emitted = 0
        self.ticks = 0

    def tick(self) -> None:
        self.ticks += 1
        if self.ticks % CLOCK_EVERY:
            return
        now = time.thread_time()
        if self.deadline is None:
            self.deadline = now + self.seconds
        elif now > self.deadline:
            raise RenderLimit(f"the time limit ({self.seconds:g} s of CPU time per render)")

    def emit(self, chars: int) -> None:
        self.emitted += chars
        if self.emitted > MAX_OUTPUT:
            raise RenderLimit(f"the output-size limit ({MAX_OUTPUT} characters)")


_budget: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("babeleval_render_budget", default=None)


def _tick() -> None:
    budget = _budget.get()
    if budget is not None:
        budget.tick()


def _too_big(what: str) -> RenderLimit:
    return RenderLimit(f"the output-size limit ({MAX_OUTPUT} characters): {what}")


def text_size(value: Any, limit: int = MAX_OUTPUT) -> int:
    """About how long ``str(value)`` is, without building it; stops counting past ``limit``."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return value.bit_length() * 3 // 10 + 1
    if isinstance(value, (float, complex)):
        return 25
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        total = 2
        items = value.items() if isinstance(value, dict) else value
        for item in items:
            total += 2 + text_size(item, limit - total)
            if total > limit:
                break
        return total
    return len(type(value).__name__) + 16  # objects the sandbox lets through print as short reprs


def _check_text(value: Any, what: str) -> None:
    if text_size(value) > MAX_OUTPUT:
        raise _too_big(what)


def _check_length(value: Any, what: str) -> Any:
    if isinstance(value, (str, list, tuple, dict, set)) and len(value) > MAX_OUTPUT:
        raise _too_big(what)
    return value


def _check_numbers(args: Iterable[Any], what: str) -> None:
    """No whole-number argument larger than the limit: a width, a count, a fill length."""
    for arg in args:
        if isinstance(arg, int) and not isinstance(arg, bool) and abs(arg) > MAX_OUTPUT:
            raise _too_big(f"{what} with the number {arg}")


_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[#0 +\-]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_printf(fmt: str, args: Any) -> None:
    for match in _PRINTF_SPEC.finditer(fmt):
        for number in match.groups():
            if number and number != "*" and int(number) > MAX_OUTPUT:
                raise _too_big(f"a format width or precision of {number}")
    values = args if isinstance(args, tuple) else (args,)
    if "*" in fmt:  # a width taken from the arguments
        _check_numbers(values, "a '*' format width")
    if text_size(fmt) + sum(text_size(v) for v in values) > MAX_OUTPUT:
        raise _too_big("formatting")


def _check_format(fmt: str, args: Iterable[Any], kwargs: dict[str, Any]) -> None:
    """str.format / format_map: widths in the format string, and widths passed as nested fields."""
    try:
        fields = list(string.Formatter().parse(fmt))
    except ValueError:
        return  # str.format raises the same error itself
    for _, _, format_spec, _ in fields:
        for number in re.findall(r"\d+", format_spec or ""):
            if int(number) > MAX_OUTPUT:
                raise _too_big(f"a format width or precision of {number}")
    values = [*args, *kwargs.values()]
    for value in list(values):
        if isinstance(value, dict):  # format_map's mapping
            values.extend(value.values())
    if any("{" in (format_spec or "") for _, _, format_spec, _ in fields):  # a width taken from another field
        _check_numbers(values, "a nested format width")
    if text_size(fmt) + sum(text_size(v) for v in values) > MAX_OUTPUT:
        raise _too_big("formatting")


def _replaced_size(text: str, old: Any, new: Any, count: Any = -1) -> int:
    if not isinstance(text, str) or not isinstance(old, str) or not isinstance(new, str):
        return 0
    hits = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    return len(text) + hits * max(0, len(new) - len(old))


def _joined_size(items: list[Any], separator: Any) -> int:
    total = max(0, len(items) - 1) * text_size(separator)
    for item in items:
        if total > MAX_OUTPUT:
            break
        total += text_size(item, MAX_OUTPUT - total)
    return total


# -- string methods a template may call --------------------------------------------------------------------


def _check_method(obj: Any, args: tuple, kwargs: dict[str, Any]) -> tuple:
    """Checks a bound ``str`` method before it runs; returns the (possibly materialised) arguments."""
    obj = getattr(obj, "__wrapped__", obj)  # the sandbox hands out str.format wrapped in its own formatter
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", "")
    if not isinstance(owner, str):
        return args
    if name == "join" and args:
        items = list(args[0])
        if _joined_size(items, owner) > MAX_OUTPUT:
            raise _too_big("str.join")
        return (items, *args[1:])
    if name == "replace" and _replaced_size(owner, *args[:3]) > MAX_OUTPUT:
        raise _too_big("str.replace")
    if name in ("center", "ljust", "rjust", "zfill"):
        _check_numbers([*args, *kwargs.values()], f"str.{name}")
    if name in ("format", "format_map"):
        _check_format(owner, args, kwargs)
    if name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(size, int) and len(owner) + owner.count("\t") * size > MAX_OUTPUT:
            raise _too_big("str.expandtabs")
    if name == "translate" and args and isinstance(args[0], dict):
        longest = max((text_size(v) for v in args[0].values()), default=1)
        if len(owner) * longest > MAX_OUTPUT:
            raise _too_big("str.translate")
    return args


# -- filters ------------------------------------------------------------------------------------------------


def _plain_args(args: tuple) -> tuple[int, tuple]:
    """(index of the filtered value, arguments from there): pass_context/pass_eval_context filters get more first."""
    start = 0
    while start < len(args) and isinstance(args[start], (Context, EvalContext, jinja2.Environment)):
        start += 1
    return start, args[start:]


def _pre_join(value, d="", attribute=None):
    items = list(value)
    if _joined_size(items, d) > MAX_OUTPUT:
        raise _too_big("the join filter")
    return items


def _pre_indent(value, width=4, first=False, blank=False):
    lines = str(value).count("\n") + 1
    if text_size(value) + lines * text_size(width) > MAX_OUTPUT:
        raise _too_big("the indent filter")


def _pre_wordwrap(value, width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True):
    text = str(value)
    breaks = len(text) // max(1, width if isinstance(width, int) else 1) + text.count("\n") + 1
    if len(text) + breaks * text_size(wrapstring or "\n") > MAX_OUTPUT:
        raise _too_big("the wordwrap filter")


def _pre_replace(value, old, new, count=None):
    if _replaced_size(str(value), old, new, -1 if count is None else count) > MAX_OUTPUT:
        raise _too_big("the replace filter")


def _pre_format(value, *args, **kwargs):
    if isinstance(value, str):
        _check_printf(value, kwargs or tuple(args))


def _pre_sum(iterable, attribute=None, start=0):
    if isinstance(start, (str, list, tuple)):
        items = list(iterable)
        if _joined_size(items, "") > MAX_OUTPUT:
            raise _too_big("the sum filter")
        return items
    return None


# Filters whose output can be much larger than their input: checked before they run. A checker may return the
# filtered value materialised (a generator it had to consume), to be passed on in its place.
_PRE_CHECKS = {"join": _pre_join, "indent": _pre_indent, "wordwrap": _pre_wordwrap, "replace": _pre_replace,
               "format": _pre_format, "sum": _pre_sum}
# Filters whose whole-number arguments are sizes: a width, a length, a count of items to fill.
_SIZED_BY_NUMBERS = {"center", "indent", "wordwrap", "truncate", "batch", "slice"}
# Filters that turn any value into its text: the value's printed size is checked first.
_STRINGIFYING = {"string", "pprint", "tojson", "urlize", "xmlattr", "escape", "e", "forceescape", "safe",
                 "center", "title", "upper", "lower", "capitalize", "trim", "striptags", "truncate", "urlencode"}


def _guard_filter(name: str, func: Any) -> Any:
    @functools.wraps(func)  # keeps jinja_pass_arg, so context-taking filters still get their context
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _tick()
        start, plain = _plain_args(args)
        if name in _SIZED_BY_NUMBERS:
            _check_numbers([*plain[1:], *kwargs.values()], f"the {name} filter")
        if name in _STRINGIFYING and plain:
            _check_text(plain[0], f"the {name} filter")
        check = _PRE_CHECKS.get(name)
        if check is not None and plain:
            materialised = check(*plain, **kwargs)
            if materialised is not None:
                args = (*args[:start], materialised, *plain[1:])
        return _check_length(func(*args, **kwargs), f"the {name} filter")

    return guarded


# -- the environment ----------------------------------------------------------------------------------------


class _NoFiles(jinja2.BaseLoader):
    """The sandbox has no file system: include, import and extends are refused."""

    def get_source(self, environment, template):
        raise jinja2.exceptions.SecurityError(f"templates may not include, import or extend files ('{template}')")


class Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, with no file access and every call, filter and growing operator budgeted."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def call_binop(self, context, operator, left, right):
        _tick()
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
            raise jinja2.exceptions.SecurityError(f"exponent {right} is larger than {MAX_EXPONENT}")
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and \
                left.bit_length() * max(right, 0) > MAX_INT_BITS:
            raise _too_big(f"'**' would build a number of more than {MAX_INT_BITS} bits")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(times, int) and len(seq) * times > MAX_REPEAT:
                    raise jinja2.exceptions.SecurityError(f"'*' would build a sequence longer than {MAX_REPEAT}")
            if isinstance(left, int) and isinstance(right, int) and \
                    left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise _too_big(f"'*' would build a number of more than {MAX_INT_BITS} bits")
        if operator == "+" and isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)) \
                and len(left) + len(right) > MAX_OUTPUT:
            raise _too_big("'+'")
        if operator == "%" and isinstance(left, str):
            _check_printf(left, right)
        return _check_length(super().call_binop(context, operator, left, right), f"'{operator}'")

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (Jinja's own signature)
        _tick()
        args = _check_method(__obj, args, kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        return _check_length(result, f"calling {getattr(__obj, '__name__', 'a function')}")


def _finalize(value: Any) -> Any:
    """Every ``{{ }}`` output passes here before it becomes text: its size is counted against the budget."""
    size = text_size(value)
    budget = _budget.get()
    if budget is not None:
        budget.tick()
        budget.emit(size)
    elif size > MAX_OUTPUT:
        raise _too_big("an output")
    return value


def _loop(iterable: Any, literal_chars: int) -> Iterator[Any]:
    """Every ``for`` loop iterates through here: the clock is checked, and the loop body's own text counted."""
    for item in iterable:
        budget = _budget.get()
        if budget is not None:
            budget.tick()
            budget.emit(literal_chars)
        yield item


def _concat(*parts: Any) -> str:
    """The ``~`` operator, with its result's size checked before it is built."""
    _tick()
    total = 0
    for part in parts:
        total += text_size(part)
        if total > MAX_OUTPUT:
            raise _too_big("'~'")
    return "".join(str(part) for part in parts)


ENV = Sandbox(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False, loader=_NoFiles(),
              finalize=_finalize)
# Only the harmless helpers stay: no lipsum, cycler or joiner objects to probe.
ENV.globals = {name: ENV.globals[name] for name in ("range", "dict", "namespace") if name in ENV.globals}
ENV.globals.update({"__babeleval_loop__": _loop, "__babeleval_concat__": _concat})
ENV.filters = {name: _guard_filter(name, func) for name, func in ENV.filters.items()}


def _literal_chars(body: Iterable[nodes.Node]) -> int:
    """Characters of literal text in a loop body, not counting nested loops (they count their own)."""
    total = 0
    for node in body:
        if isinstance(node, nodes.TemplateData):
            total += len(node.data)
        elif not isinstance(node, nodes.For):
            total += _literal_chars(node.iter_child_nodes())
    return total


def _budgeted(tree: nodes.Template) -> nodes.Template:
    """The parsed template with every '~' and every loop routed through the budget's checks."""
    for parent in [tree, *tree.find_all(nodes.Node)]:
        for field in parent.fields:
            value = getattr(parent, field, None)
            if isinstance(value, nodes.Concat):
                setattr(parent, field, _concat_call(value))
            elif isinstance(value, list):
                setattr(parent, field, [_concat_call(v) if isinstance(v, nodes.Concat) else v for v in value])
    for loop in tree.find_all(nodes.For):
        loop.iter = nodes.Call(nodes.Name("__babeleval_loop__", "load", lineno=loop.lineno),
                               [loop.iter, nodes.Const(_literal_chars(loop.body), lineno=loop.lineno)], [], None,
                               None, lineno=loop.lineno)
    tree.set_environment(ENV)
    return tree


def _concat_call(node: nodes.Concat) -> nodes.Call:
    return nodes.Call(nodes.Name("__babeleval_concat__", "load", lineno=node.lineno), list(node.nodes), [], None,
                      None, lineno=node.lineno)


_COMPILED: dict[str, jinja2.Template] = {}


def compile_template(source: str) -> jinja2.Template:
    if source not in _COMPILED:
        _COMPILED[source] = ENV.from_string(_budgeted(ENV.parse(source)))
    return _COMPILED[source]


def render(source: str, variables: dict[str, Any], seconds: float = TIME_LIMIT) -> str:
    """``source`` rendered with ``variables`` inside the budget; raises RenderLimit when it goes over."""
    template = compile_template(source)
    token = _budget.set(_Budget(seconds))
    try:
        chunks, total = [], 0
        for chunk in template.generate(variables):
            total += len(chunk)
            if total > MAX_OUTPUT:
                raise RenderLimit(f"the output-size limit ({MAX_OUTPUT} characters)")
            chunks.append(chunk)
            _tick()
        return "".join(chunks)
    finally:
        _budget.reset(token)
