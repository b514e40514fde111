"""The command lines' numeric settings, checked before anything is read or loaded: each check gives the message a
user sees (the flag, the value given and what it must be), or None where the value is fine."""

from __future__ import annotations


def share(flag: str, value: float) -> str | None:
    """A confidence level or a significance level: strictly between 0 and 1."""
    return None if 0 < value < 1 else f"{flag} {value}: a share, above 0 and below 1"


def at_least(flag: str, value: int, least: int, what: str, why: str = "") -> str | None:
    """A count: ``least`` or more (``what`` says what is counted; ``why``, where the least is not plain, why)."""
    if value >= least:
        return None
    return f"{flag} {value}: {what}, at least {least}" + (f" ({why})" if why else "")


def mistakes(*checks: str | None) -> list[str]:
    """The checks that found something, as ``error:`` lines."""
    return [f"error: {found}" for found in checks if found]
