"""One spelling per number, shared by gold answers (task loaders) and parsed answers (parsers)."""

from decimal import Decimal


def canonical_number(value: Decimal) -> str:
    """One spelling per number: no exponent, no trailing zeros, no "-0"."""
    if value == 0:
        return "0"
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
