"""Typed exceptions shared by all engines.

The UI turns any :class:`InputError` into a short message for the user; anything else is a bug.
"""


class ShowcaseError(Exception):
    """Base class for every error an engine raises on purpose."""


class InputError(ShowcaseError, ValueError):
    """The caller gave input the engine cannot use; the message says what to change."""


class BackboneUnavailable(ShowcaseError, RuntimeError):
    """The language-model backbone cannot be loaded here (no GGUF wheel, offline, ...)."""
