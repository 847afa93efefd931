"""The exceptions of linkwise: one class per kind of core error (core/include/linkwise/error.hpp).

The compiled module raises these with the core's message unchanged; ``kind`` and ``field`` carry
the core's ErrorKind name and the field at fault ("" where none is).
"""

from __future__ import annotations


class Error(Exception):
    """Base of every error linkwise raises. ``kind``: the core's ErrorKind name; ``field``: the
    field at fault ("layout.tp", "min_gpus"), or "" where none is."""

    kind: str = "internal"
    field: str = ""

    def __init__(self, message: str, *, kind: str | None = None, field: str = "") -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.field = field

    def __str__(self) -> str:
        # KeyError would quote the message; every linkwise error prints the core's text as is.
        return str(self.args[0]) if self.args else ""


class InvalidInputError(Error, ValueError):
    """A value or document is malformed or out of range (a bad filter, workload or report).
    Also a ``ValueError``."""

    kind = "invalid_input"


class NotFoundError(Error, KeyError):
    """An id that names nothing in the catalog (instance, GPU, preset). Also a ``KeyError``."""

    kind = "not_found"


class UnknownReferenceError(Error, ValueError):
    """A request document names something that does not exist: an unknown model preset, instance
    or GPU id inside a workload. Also a ``ValueError`` (the document is at fault, not a lookup)."""

    kind = "unknown_reference"


class UnsupportedError(Error, RuntimeError):
    """A capability this build or machine lacks, e.g. probes without CUDA or without a GPU.
    Also a ``RuntimeError``."""

    kind = "unsupported"


_BY_KIND = {
    "invalid_input": InvalidInputError,
    "not_found": NotFoundError,
    "unknown_reference": UnknownReferenceError,
    "unsupported": UnsupportedError,
}


def _from_core(kind: str, message: str, field: str) -> Error:
    """Called by linkwise._core's exception translator: the Python exception for a core error."""
    return _BY_KIND.get(kind, Error)(message, kind=kind, field=field)
