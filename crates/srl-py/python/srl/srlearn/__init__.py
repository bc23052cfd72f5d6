"""srlearn-compatible names over srl (issue 34): ``Background``, ``Database``,
``BoostedRDNClassifier`` (and its alias ``BoostedRDN``) with srlearn 0.5.5's public
signatures and conventions, so that srlearn scripts run after changing
``from srlearn... import ...`` to ``from srl.srlearn import ...``. The learning runs in
Rust (srl-boost) instead of BoostSRL's jar; no Java is needed.

The package mirrors srlearn's modules: ``srl.srlearn.rdn``, ``.background``,
``.database`` and ``.datasets`` (``load_toy_cancer``, ``load_toy_father``).

Differences a ported script can see: models are srl model files (``to_json`` /
``from_json`` read and write srl's format, not srlearn's); ``solver`` is accepted and
ignored; ``Database.from_files`` reads the files at once (``lazy_load`` is accepted);
trees may differ from BoostSRL's where BoostSRL samples candidate literals
(docs/srl-boost.md); ``BoostedRDNRegressor`` runs srl-boost's RDN-Boost regression
(``srl.BoostedRDNRegressor``), whose trees may differ from BoostSRL's by search order.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import numpy as np

from .. import _boost
from .._srl import Database as _SrlDatabase

__all__ = ["Background", "BoostedRDN", "BoostedRDNClassifier", "BoostedRDNRegressor",
           "Database"]


class Background:
    """Background knowledge: modes and the search settings srlearn writes into BoostSRL's
    background file (keyword-only, as srlearn's).

    Parameters
    ----------
    modes : list of str, optional
        Mode declarations (``"advisedby(+person,-person)."``).
    ok_if_unknown, bridgers : list of str, optional
        ``okIfUnknown:`` / ``bridger:`` predicates (``"p/2"``).
    ranges : dict of str to list of str, optional
        ``range:`` declarations: the constants of a type.
    number_of_clauses : int, default 100
        Maximum inner nodes per tree, so at most one more leaf (``setParam:
        numOfClauses``, as BoostSRL reads it).
    number_of_cycles : int, default 100
        BoostSRL's outer-loop cycles per tree, one node each (``setParam: numOfCycles``):
        also a limit on inner nodes.
    recursion, line_search, use_std_logic_variables, load_all_libraries,
    load_all_basic_modes : bool, default False
        Written as settings; srl reports the ones it does not use.
    use_prolog_variables : bool, default True
        ``usePrologVariables:`` (upper-case variables in rules).
    """

    def __init__(self, *, modes=None, ok_if_unknown=None, bridgers=None, ranges=None,
                 number_of_clauses=100, number_of_cycles=100, recursion=False,
                 line_search=False, use_std_logic_variables=False,
                 use_prolog_variables=True, load_all_libraries=False,
                 load_all_basic_modes=False):
        self.modes = list(modes) if modes is not None else []
        self.ok_if_unknown = list(ok_if_unknown) if ok_if_unknown is not None else []
        self.bridgers = list(bridgers) if bridgers is not None else []
        self.ranges = dict(ranges) if ranges is not None else {}
        self.number_of_clauses = number_of_clauses
        self.number_of_cycles = number_of_cycles
        self.recursion = recursion
        self.line_search = line_search
        self.use_std_logic_variables = use_std_logic_variables
        self.use_prolog_variables = use_prolog_variables
        self.load_all_libraries = load_all_libraries
        self.load_all_basic_modes = load_all_basic_modes

    def lines(self) -> List[str]:
        """The background as BoostSRL file lines (what srlearn writes to ``background.txt``)."""
        out = [f"usePrologVariables: {str(bool(self.use_prolog_variables)).lower()}."]
        out += [f"setParam: numOfClauses={int(self.number_of_clauses)}.",
                f"setParam: numOfCycles={int(self.number_of_cycles)}."]
        if self.line_search:
            out.append("setParam: lineSearch=true.")
        if self.recursion:
            out.append("setParam: recursion=true.")
        out += [f"okIfUnknown: {p}." for p in self.ok_if_unknown]
        out += [f"bridger: {p}." for p in self.bridgers]
        for ty, values in self.ranges.items():
            out.append(f"range: {ty}={{{', '.join(values)}}}.")
        for m in self.modes:
            m = m.strip()
            out.append(m if m.startswith("mode:") else f"mode: {m}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines()) + "\n"


class Database:
    """Examples and facts as mutable lists of atom strings (``pos``, ``neg``, ``facts``,
    ``modes``), as srlearn's ``Database``: appending to a list changes what ``fit`` sees."""

    def __init__(self) -> None:
        self.pos: List[str] = []
        self.neg: List[str] = []
        self.facts: List[str] = []
        self.modes: List[str] = []

    @staticmethod
    def from_files(pos="pos.pl", neg="neg.pl", facts="facts.pl", lazy_load=True):
        """A database with the lines of three files (``lazy_load`` is accepted; srl reads
        the files at once).

        Raises
        ------
        OSError for a missing file.
        """
        db = Database()
        for name, path in (("pos", pos), ("neg", neg), ("facts", facts)):
            with open(os.fspath(path), encoding="utf-8") as f:
                setattr(db, name, [line.strip() for line in f if line.strip()])
        return db

    def _srl(self, background: Optional[Background]) -> _SrlDatabase:
        modes = background.lines() if background is not None else list(self.modes)
        return _SrlDatabase(pos=[str(a) for a in self.pos], neg=[str(a) for a in self.neg],
                            facts=[str(a) for a in self.facts], modes=modes)

    def __repr__(self) -> str:
        return (f"Database(pos={len(self.pos)} atoms, neg={len(self.neg)}, "
                f"facts={len(self.facts)}, modes={len(self.modes)})")


class BoostedRDNClassifier:
    """srlearn's ``BoostedRDNClassifier`` over srl's RFGB: the same arguments and
    defaults (``node_size=2``, ``max_tree_depth=3``, ``neg_pos_ratio=2``,
    ``n_estimators=10``, the background's ``number_of_clauses`` as the limit on inner nodes).

    ``predict_proba(database)`` returns P(true) of the positive examples, then of the
    negative ones, and sets ``classes_`` to their labels (1.0 / 0.0) in that order, as
    srlearn does; ``predict`` thresholds at 0.5.
    """

    def __init__(self, background=None, target="None", n_estimators=10, node_size=2,
                 max_tree_depth=3, neg_pos_ratio=2, solver=None):
        self.background = background
        self.target = target
        self.n_estimators = n_estimators
        self.node_size = node_size
        self.max_tree_depth = max_tree_depth
        self.neg_pos_ratio = neg_pos_ratio
        self.solver = solver

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor arguments (scikit-learn's ``get_params``)."""
        return {k: getattr(self, k) for k in ("background", "target", "n_estimators",
                                                "node_size", "max_tree_depth",
                                                "neg_pos_ratio", "solver")}

    def set_params(self, **params):
        """Sets constructor arguments; returns ``self``."""
        for k, v in params.items():
            if k not in self.get_params():
                raise ValueError(f"invalid parameter {k!r}")
            setattr(self, k, v)
        return self

    def _model(self) -> _boost.BoostedRDN:
        return _boost.BoostedRDN(
            target=self.target, n_estimators=self.n_estimators,
            neg_pos_ratio=float(self.neg_pos_ratio), node_size=self.node_size,
            max_tree_depth=self.max_tree_depth)

    def fit(self, database: Database):
        """Learns the trees of ``target`` from ``database`` with ``background``; returns
        ``self``."""
        self.estimator_ = self._model().fit(database._srl(self.background))
        self.estimators_ = self.estimator_.estimators_
        return self

    def _scores(self, database: Database) -> np.ndarray:
        if not hasattr(self, "estimator_"):
            raise _boost._srl.NotFittedError(
                "this BoostedRDNClassifier is not fitted yet: call fit(database)")
        db = database._srl(self.background)
        _, labels = db.examples(self.estimator_.target_)
        self.classes_ = labels.astype(np.float64)
        return self.estimator_.predict_proba(db)

    def predict_proba(self, database: Database) -> np.ndarray:
        """P(true) per example: positives first, then negatives; sets ``classes_``."""
        return self._scores(database)

    def predict(self, database: Database) -> np.ndarray:
        """``predict_proba(database) > 0.5`` as a bool array; sets ``classes_``."""
        return self._scores(database) > 0.5

    @property
    def feature_importances_(self):
        """A ``collections.Counter`` of how often each predicate is a splitting criterion
        (srl counts each tree node's literals once; srlearn counts BoostSRL's clause
        bodies, so its numbers are larger on deep trees)."""
        if not hasattr(self, "estimator_"):
            raise _boost._srl.NotFittedError(
                "this estimator is not fitted yet: call fit(database)")
        return self.estimator_.feature_importances_

    def to_json(self, file_name) -> None:
        """Writes the model as an srl model file (replacing an existing one)."""
        self.estimator_.to_json(os.fspath(file_name), overwrite=True)

    def from_json(self, file_name):
        """Reads an srl model file into this estimator; returns ``self``."""
        self.estimator_ = _boost.BoostedRDN.from_json(os.fspath(file_name))
        self.estimators_ = self.estimator_.estimators_
        self.target = self.estimator_.target_
        return self


class BoostedRDN(BoostedRDNClassifier):
    """srlearn's deprecated alias of :class:`BoostedRDNClassifier`."""


class BoostedRDNRegressor(BoostedRDNClassifier):
    """srlearn's ``BoostedRDNRegressor`` over srl's RDN-Boost regression
    (:class:`srl.BoostedRDNRegressor`): the same arguments and defaults as
    :class:`BoostedRDNClassifier` (``neg_pos_ratio`` is accepted and unused: regression
    has no negatives). The database's ``pos`` list holds
    ``regressionExample(target(args), value).`` atoms.

    ``predict(database)`` returns the predicted values (float64, shape (n,)) of the
    database's examples in their order, as srlearn's does.
    """

    def _model(self):  # type: ignore[override]
        return _boost.BoostedRDNRegressor(
            target=self.target, n_estimators=self.n_estimators, node_size=self.node_size,
            max_tree_depth=self.max_tree_depth)

    def fit(self, database: Database):
        """Learns the regression trees of ``target``; returns ``self``."""
        self.estimator_ = self._model().fit(database._srl(self.background))
        self.estimators_ = self.estimator_.estimators_
        return self

    def predict(self, database: Database) -> np.ndarray:  # type: ignore[override]
        """Predicted values, float64 of shape (n,)."""
        if not hasattr(self, "estimator_"):
            raise _boost._srl.NotFittedError(
                "this BoostedRDNRegressor is not fitted yet: call fit(database)")
        return self.estimator_.predict(database._srl(self.background))

    def predict_proba(self, database: Database) -> np.ndarray:
        """Not defined for regression (srlearn's regressor has none either)."""
        raise AttributeError("BoostedRDNRegressor has no predict_proba; use predict")

    def from_json(self, file_name):
        """Reads an srl regression model file into this estimator; returns ``self``."""
        self.estimator_ = _boost.BoostedRDNRegressor.from_json(os.fspath(file_name))
        self.estimators_ = self.estimator_.estimators_
        self.target = self.estimator_.target_
        return self
