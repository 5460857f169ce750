"""``engines.bandits`` is the former name of :mod:`engines.dueling`; it still imports, with a
DeprecationWarning, for one release.

``import engines.bandits`` gives the dueling package's names, and ``engines.bandits.X`` is the very
module ``engines.dueling.X`` (the same objects, not a copy: a ``SimConfig`` from either is the same
class). ``python -m engines.bandits ...`` runs ``python -m engines.dueling ...``. Use
``engines.dueling``: this package goes in the next release.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

_OLD, _NEW = "engines.bandits", "engines.dueling"
MESSAGE = ("engines.bandits is now engines.dueling: import engines.dueling (python -m engines.dueling); "
           "the old name goes in the next release")

warnings.warn(MESSAGE, DeprecationWarning, stacklevel=2)


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``engines.bandits.X`` as the module ``engines.dueling.X`` itself."""

    def find_spec(self, name, path=None, target=None):
        if name.startswith(_OLD + ".") and name != _OLD + ".__main__":
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(_NEW + spec.name[len(_OLD):])

    def exec_module(self, module) -> None:
        """Nothing to run: the module is the dueling one, already imported."""


if not any(isinstance(f, _Alias) for f in sys.meta_path):
    sys.meta_path.insert(0, _Alias())

_dueling = importlib.import_module(_NEW)
__all__ = list(_dueling.__all__)
globals().update({name: getattr(_dueling, name) for name in __all__})
