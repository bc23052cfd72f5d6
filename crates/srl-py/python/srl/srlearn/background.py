"""srlearn's ``srlearn.background`` module: :class:`Background`."""

from . import Background

__all__ = ["Background"]
