"""srlearn 0.5.5's ``srlearn.example_data``: ``train`` and ``test``, the Toy Cancer data
set as two :class:`srl.srlearn.Database` objects (srlearn deprecated this module in
favour of ``datasets.load_toy_cancer`` and warns on import; so does this one)."""

import warnings

from .datasets import load_toy_cancer

warnings.warn("`example_data` moved to `srl.srlearn.datasets.load_toy_cancer` (as in "
              "srlearn)", DeprecationWarning, stacklevel=2)

train, test = load_toy_cancer()

__all__ = ["test", "train"]
