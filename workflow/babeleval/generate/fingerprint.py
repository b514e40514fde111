"""Fingerprints: what identifies a model's outputs, for the response cache and provenance.

A hub model is identified by its id and revision (pin a commit: a branch name
moves). A local directory is identified by its content: small files are hashed
whole; weight shards over 64 MiB by size plus their first and last MiB, which
tells apart any two checkpoints in practice without reading gigabytes at every
job start.

Every model setting is declared once, as a field of its backend's config class
(``babeleval.generate.backends.config``) made with ``setting``: its default and
its role.

- OUTPUT:  changes the model's outputs: part of the model fingerprint (the cache key) and of the rescoring
           decision; ``enters`` says how its value enters the fingerprint where that is not ``{name: value}``
- REQUEST: changes outputs through each request itself (its messages or generation settings), which the
           cache keys on: part of the rescoring decision, not of the fingerprint
- SPEED:   changes only speed or robustness, never an output (kept out of both)
- IGNORED: the backend does not read the setting: another backend's setting, or one declared with an
           ``ignored_if`` that holds for the entry (chat settings with chat off, a hub revision for local
           weights); kept out of both

The fingerprint (``model_fingerprint``) and the rescoring decision (``output_settings``) are derived from
these declarations here; nothing else classifies a setting.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any, Callable

from ..core.jsonl import dumps

WHOLE_FILE_LIMIT = 64 * 2**20
EDGE = 2**20

OUTPUT, REQUEST, SPEED, IGNORED = "output", "request", "speed", "ignored"
ROLES = (OUTPUT, REQUEST, SPEED)
# what a setting's field carries in its metadata (see ``setting``)
ROLE, ENTERS, IGNORED_IF = "role", "enters", "ignored_if"

# How an OUTPUT setting enters the fingerprint: (setting name, config, model path) -> fingerprint fields.
Enters = Callable[[str, Any, str], dict[str, Any]]


def digest(obj: Any) -> str:
    return hashlib.sha256(dumps(obj).encode("utf-8")).hexdigest()


def directory_hash(path: Path) -> str:
    h = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        size = file.stat().st_size
        h.update(f"{file.relative_to(path).as_posix()}\0{size}\0".encode())
        with file.open("rb") as handle:
            if size <= WHOLE_FILE_LIMIT:
                h.update(handle.read())
            else:
                h.update(handle.read(EDGE))
                handle.seek(size - EDGE)
                h.update(handle.read(EDGE))
    return h.hexdigest()


# -- how a value enters the fingerprint ------------------------------------------------------------------


def as_is(name: str, config: Any, model_path: str) -> dict[str, Any]:
    """The value itself, the default where the entry leaves it out."""
    return {name: getattr(config, name)}


def if_set(name: str, config: Any, model_path: str) -> dict[str, Any]:
    """The value where it is set; off, the default, leaves the fingerprint as it was before the setting existed."""
    value = getattr(config, name)
    return {name: value} if value else {}


def nothing(name: str, config: Any, model_path: str) -> dict[str, Any]:
    """No field of its own: the setting enters through another one (the model path, the hub id)."""
    return {}


def served_name(name: str, config: Any, model_path: str) -> dict[str, Any]:
    """The name the model is asked for by (an API's model, as the backend sends it)."""
    return {name: model_path}


def without_trailing_slash(name: str, config: Any, model_path: str) -> dict[str, Any]:
    """A URL, without the trailing slash that does not change where it points."""
    return {name: getattr(config, name).rstrip("/")}


def file_sha256(name: str, config: Any, model_path: str) -> dict[str, Any]:
    """A file by its content (``<name>_sha256``; None for a file that is not there); nothing where unset."""
    path = getattr(config, name)
    if not path:
        return {}
    file = Path(path)
    return {f"{name}_sha256": hashlib.sha256(file.read_bytes()).hexdigest() if file.is_file() else None}


# -- declaring a setting, and what is derived from the declarations ------------------------------------------


def setting(default: Any, role: str, *, enters: Enters = as_is,
            ignored_if: Callable[[Any], bool] | None = None) -> Any:
    """A model setting: a config field with its default, its role and (OUTPUT) how it enters the fingerprint.

    ``ignored_if(config)``: where it holds, the backend does not read the setting for that entry.
    """
    if role not in ROLES:
        raise ValueError(f"a setting's role is one of {', '.join(ROLES)}, not {role!r}")
    return dataclasses.field(default=default, metadata={ROLE: role, ENTERS: enters, IGNORED_IF: ignored_if})


def declared_settings(config: Any) -> tuple[dataclasses.Field, ...]:
    """The settings a config class (or config) declares, in field order."""
    return tuple(f for f in dataclasses.fields(config) if ROLE in f.metadata)


def setting_role(config: Any, key: str) -> str:
    """OUTPUT, REQUEST, SPEED or IGNORED: what a setting does for this config's model."""
    declared = next((f for f in declared_settings(config) if f.name == key), None)
    if declared is None:  # another backend's setting (one no backend declares is refused when an entry is typed)
        return IGNORED
    ignored_if = declared.metadata[IGNORED_IF]
    return IGNORED if ignored_if is not None and ignored_if(config) else declared.metadata[ROLE]


def output_settings(config: Any) -> dict[str, Any]:
    """The settings of a model entry that change its outputs (in the entry's order): a change to any must rescore."""
    return {key: getattr(config, key) for key in config.given if setting_role(config, key) in (OUTPUT, REQUEST)}


def model_fingerprint(config: Any, model_path: str) -> dict[str, Any]:
    """What identifies a model's outputs: every OUTPUT setting of its config, given in its entry or at its default.

    Speed-only settings (batch size, device, concurrency, timeouts, retries) are left out, so changing them
    keeps the cache. A chat model adds ``chat`` and, when its entry overrides the tokenizer's template, that
    file's hash; the system prompt and exemplar turns enter the cache key through the messages themselves.
    An API model is identified by its server, endpoint kind and model name (use a dated snapshot name: an
    alias moves), never by anything secret.
    """
    fingerprint: dict[str, Any] = {}
    for declared in declared_settings(config):
        if setting_role(config, declared.name) == OUTPUT:
            fingerprint.update(declared.metadata[ENTERS](declared.name, config, model_path))
    return fingerprint
