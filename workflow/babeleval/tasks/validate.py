"""Checks every task loader applies to every row, so a malformed row stops the run instead of being coerced.

Each check raises one ``DataError`` naming the place (file and row or line, or
the hub dataset, config and split), the field and what was expected. Nothing is
repaired on the way: a gold number is an integer or a decimal written plainly
(``-12``, ``3.25``; not ``3/4``, ``40abc``, ``1e3`` nor ``1,000``, whose comma
is a thousands separator in some locales and a decimal comma in others); a
label index is an integer in range (not ``1.9``, not ``"2"``, not ``true``); a
choice is a non-empty string; ids are unique within a file.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Sequence

from ..core.errors import DataError
from ..core.numbers import canonical_number

PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def shown(value: Any) -> str:
    """The offending value as the message shows it: its repr, shortened."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def require_fields(row: Any, fields: Sequence[str], where: str) -> None:
    if not isinstance(row, dict):
        raise DataError(f"{where}: expected an object with fields {', '.join(fields)}, got {type(row).__name__}")
    missing = [key for key in fields if key not in row or row[key] is None]
    if missing:
        raise DataError(f"{where}: missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}")


def require_text(row: dict[str, Any], fields: Sequence[str], where: str) -> None:
    empty = [key for key in fields if not isinstance(row.get(key), str) or not row[key].strip()]
    if empty:
        raise DataError(f"{where}: empty or non-text field{'s' if len(empty) > 1 else ''} {', '.join(empty)}")


def require_list(value: Any, where: str, field: str, of: str) -> list:
    if not isinstance(value, list):
        raise DataError(f"{where}: {field} must be a list of {of}, got {shown(value)}")
    return value


def choice_texts(values: Any, where: str, field: str, minimum: int = 2, maximum: int = 26) -> list[str]:
    """A list of ``minimum``..``maximum`` non-empty strings (the options of a multiple-choice item)."""
    values = require_list(values, where, field, "texts")
    if not minimum <= len(values) <= maximum:
        raise DataError(f"{where}: {field} must hold {minimum} to {maximum} choices, got {len(values)}")
    for index, value in enumerate(values):
        if not isinstance(value, str) or not value.strip():
            raise DataError(f"{where}: {field}[{index}] must be a non-empty text, got {shown(value)}")
    return list(values)


def label_index(value: Any, size: int, where: str, field: str) -> int:
    """An integer 0..size-1, as the official files write it (a JSON number, not a string, float or boolean)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        raise DataError(f"{where}: {field} must be an integer 0-{size - 1}, got {shown(value)}")
    return value


def flags(values: Any, where: str, field: str) -> list[int]:
    """A list of 0/1 integers (TruthfulQA's ``mc1_targets.labels``)."""
    values = require_list(values, where, field, "0/1 integers")
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1):
            raise DataError(f"{where}: {field}[{index}] must be the integer 0 or 1, got {shown(value)}")
    return list(values)


def plain_number(value: Any, where: str, field: str) -> str:
    """A gold number in canonical spelling (the parsers' ``canonical_number``); only plain spellings are read."""
    if isinstance(value, int) and not isinstance(value, bool):
        return canonical_number(Decimal(value))
    if isinstance(value, str) and PLAIN_NUMBER.fullmatch(value.strip()):
        return canonical_number(Decimal(value.strip()))
    raise DataError(f"{where}: {field} must be an integer or a plainly written decimal such as 18 or 2.5 "
                    f"(no fractions, units, exponents or thousands separators), got {shown(value)}")


def one_of(value: Any, allowed: Sequence[str], where: str, field: str) -> str:
    """A string among ``allowed``, as written (surrounding spaces aside; no change of case)."""
    text = value.strip() if isinstance(value, str) else value
    if text not in allowed:
        raise DataError(f"{where}: {field} must be one of {', '.join(allowed)}, got {shown(value)}")
    return text


def check_unique(items: list[dict[str, Any]], where: str, what: str = "id",
                 places: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Items with pairwise different ids; a repeat names both places (``row N`` unless ``places`` says)."""
    seen: dict[str, str] = {}
    for number, item in enumerate(items, start=1):
        place = places[number - 1] if places else f"row {number}"
        if item["id"] in seen:
            raise DataError(f"{where}: {place}: duplicate {what} {item['id']!r} (already at {seen[item['id']]})")
        seen[item["id"]] = place
    return items
