"""srlearn's ``srlearn.rdn`` module: the boosted relational dependency networks
(``from srlearn.rdn import BoostedRDNClassifier`` becomes ``from srl.srlearn.rdn import
BoostedRDNClassifier``)."""

from . import BoostedRDN, BoostedRDNClassifier, BoostedRDNRegressor

__all__ = ["BoostedRDN", "BoostedRDNClassifier", "BoostedRDNRegressor"]
