"""Errors a user can act on. Each message names the file and the key, row or language at fault."""


class BabelevalError(Exception):
    """Base class: a problem in the user's configuration, data or templates, not a bug."""


class ConfigError(BabelevalError):
    """params.yaml (or a value taken from it) is invalid."""


class DataError(BabelevalError):
    """A dataset file or dataset row is missing, empty or malformed."""


class TemplateError(BabelevalError):
    """A prompt template file is invalid or fails to render."""


class BackendError(BabelevalError):
    """A model backend cannot do what was asked (missing extra, unsupported scoring mode)."""


class StateError(BabelevalError):
    """A file a run keeps between runs (the response cache) cannot be used; the message says what to do."""


class MachineError(BabelevalError):
    """The machine cannot do what the configuration asks: no CUDA, no network for a hub id, a full disk."""
