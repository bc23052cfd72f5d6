"""srlearn's ``srlearn.database`` module: :class:`Database`."""

from . import Database

__all__ = ["Database"]
