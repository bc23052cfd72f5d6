"""Toy data sets of srlearn 0.5.5 (``srlearn.datasets``): ``load_toy_cancer`` and
``load_toy_father``, each returning ``(train, test)`` as :class:`srl.srlearn.Database`.

The atoms are the data of srlearn's two built-in data sets (Hayes 2019, "srlearn: A
Python library for gradient-boosted statistical relational models"; the smokers /
friends and family toy domains), kept here as data so that srlearn's README
quick-start runs unchanged on ``srl.srlearn``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import Database

__all__ = ["load", "load_toy_cancer", "load_toy_father"]

_TOY_CANCER: Dict[str, Dict[str, List[str]]] = {
    "train": {
        "modes": [
            "friends(+Person,-Person).",
            "friends(-Person,+Person).",
            "smokes(+Person).",
            "cancer(+Person).",
        ],
        "pos": [
            "cancer(alice).",
            "cancer(bob).",
            "cancer(chuck).",
            "cancer(fred).",
        ],
        "neg": [
            "cancer(dan).",
            "cancer(earl).",
        ],
        "facts": [
            "friends(alice,bob).",
            "friends(alice,fred).",
            "friends(chuck,bob).",
            "friends(chuck,fred).",
            "friends(dan,bob).",
            "friends(earl,bob).",
            "friends(bob,alice).",
            "friends(fred,alice).",
            "friends(bob,chuck).",
            "friends(fred,chuck).",
            "friends(bob,dan).",
            "friends(bob,earl).",
            "smokes(alice).",
            "smokes(chuck).",
            "smokes(bob).",
        ],
    },
    "test": {
        "modes": [
            "friends(+Person,-Person).",
            "friends(-Person,+Person).",
            "smokes(+Person).",
            "cancer(+Person).",
        ],
        "pos": [
            "cancer(zod).",
            "cancer(xena).",
            "cancer(yoda).",
        ],
        "neg": [
            "cancer(voldemort).",
            "cancer(watson).",
        ],
        "facts": [
            "friends(zod,xena).",
            "friends(xena,watson).",
            "friends(watson,voldemort).",
            "friends(voldemort,yoda).",
            "friends(yoda,zod).",
            "friends(xena,zod).",
            "friends(watson,xena).",
            "friends(voldemort,watson).",
            "friends(yoda,voldemort).",
            "friends(zod,yoda).",
            "smokes(zod).",
            "smokes(xena).",
            "smokes(yoda).",
        ],
    },
}

_TOY_FATHER: Dict[str, Dict[str, List[str]]] = {
    "train": {
        "modes": [
            "male(+name).",
            "father(+name,+name).",
            "childof(+name,+name).",
            "siblingof(+name,+name).",
        ],
        "pos": [
            "father(harrypotter,jamespotter).",
            "father(dracomalfoy,luciusmalfoy).",
            "father(ginnyweasley,arthurweasley).",
            "father(ronweasley,arthurweasley).",
            "father(fredweasley,arthurweasley).",
        ],
        "neg": [
            "father(harrypotter,mrgranger).",
            "father(harrypotter,mrsgranger).",
            "father(georgeweasley,xenophiliuslovegood).",
            "father(luciusmalfoy,xenophiliuslovegood).",
            "father(harrypotter,hagrid).",
            "father(ginnyweasley,dracomalfoy).",
            "father(hagrid,dracomalfoy).",
            "father(hagrid,dumbledore).",
            "father(lunalovegood,dumbledore).",
            "father(hedwig,narcissamalfoy).",
            "father(hedwig,lunalovegood).",
            "father(ronweasley,hedwig).",
            "father(mollyweasley,cygnusblack).",
            "father(arthurweasley,mollyweasley).",
            "father(georgeweasley,fredweasley).",
            "father(fredweasley,georgeweasley).",
            "father(ronweasley,georgeweasley).",
            "father(ronweasley,hermione).",
            "father(dracomalfoy,narcissamalfoy).",
            "father(hermione,mrsgranger).",
            "father(ginnyweasley,mollyweasley).",
        ],
        "facts": [
            "male(mrgranger).",
            "male(jamespotter).",
            "male(harrypotter).",
            "male(luciusmalfoy).",
            "male(dracomalfoy).",
            "male(arthurweasley).",
            "male(ronweasley).",
            "male(fredweasley).",
            "male(georgeweasley).",
            "male(hagrid).",
            "male(dumbledore).",
            "male(xenophiliuslovegood).",
            "male(cygnusblack).",
            "siblingof(ronweasley,fredweasley).",
            "siblingof(ronweasley,georgeweasley).",
            "siblingof(ronweasley,ginnyweasley).",
            "siblingof(fredweasley,ronweasley).",
            "siblingof(fredweasley,georgeweasley).",
            "siblingof(fredweasley,ginnyweasley).",
            "siblingof(georgeweasley,ronweasley).",
            "siblingof(georgeweasley,fredweasley).",
            "siblingof(georgeweasley,ginnyweasley).",
            "siblingof(ginnyweasley,ronweasley).",
            "siblingof(ginnyweasley,fredweasley).",
            "siblingof(ginnyweasley,georgeweasley).",
            "childof(mrgranger,hermione).",
            "childof(mrsgranger,hermione).",
            "childof(jamespotter,harrypotter).",
            "childof(lilypotter,harrypotter).",
            "childof(luciusmalfoy,dracomalfoy).",
            "childof(narcissamalfoy,dracomalfoy).",
            "childof(arthurweasley,ronweasley).",
            "childof(mollyweasley,ronweasley).",
            "childof(arthurweasley,fredweasley).",
            "childof(mollyweasley,fredweasley).",
            "childof(arthurweasley,georgeweasley).",
            "childof(mollyweasley,georgeweasley).",
            "childof(arthurweasley,ginnyweasley).",
            "childof(mollyweasley,ginnyweasley).",
            "childof(xenophiliuslovegood,lunalovegood).",
            "childof(cygnusblack,narcissamalfoy).",
        ],
    },
    "test": {
        "modes": [
            "male(+name).",
            "father(+name,+name).",
            "childof(+name,+name).",
            "siblingof(+name,+name).",
        ],
        "pos": [
            "father(elizabeth,mrbennet).",
            "father(jane,mrbennet).",
            "father(charlotte,mrlucas).",
        ],
        "neg": [
            "father(charlotte,mrsbennet).",
            "father(jane,mrlucas).",
            "father(mrsbennet,mrbennet).",
            "father(jane,elizabeth).",
        ],
        "facts": [
            "male(mrbennet).",
            "male(mrlucas).",
            "male(darcy).",
            "childof(mrbennet,elizabeth).",
            "childof(mrsbennet,elizabeth).",
            "childof(mrbennet,jane).",
            "childof(mrsbennet,jane).",
            "childof(mrlucas,charlotte).",
            "childof(mrslucas,charlotte).",
            "siblingof(jane,elizabeth).",
            "siblingof(elizabeth,jane).",
        ],
    },
}


def _load(data: Dict[str, Dict[str, List[str]]]) -> Tuple[Database, Database]:
    out = []
    for split in ("train", "test"):
        db = Database()
        for key, atoms in data[split].items():
            setattr(db, key, list(atoms))
        out.append(db)
    return out[0], out[1]


def load_toy_cancer() -> Tuple[Database, Database]:
    """The Toy Cancer data set (target ``cancer``; ``friends`` and ``smokes`` facts).

    Returns
    -------
    train, test : srl.srlearn.Database
        4 positive, 2 negative examples and 15 facts; 3, 2 and 13 (fresh lists on every
        call).
    """
    return _load(_TOY_CANCER)


def load_toy_father() -> Tuple[Database, Database]:
    """The Toy Father data set (target ``father``; ``male``, ``childof``, ``siblingof``).

    Returns
    -------
    train, test : srl.srlearn.Database
        5 positive, 21 negative examples and 41 facts; 3, 4 and 11.
    """
    return _load(_TOY_FATHER)


# The shared BoostSRL folders (srl's data registry, `srl data fetch NAME`): name -> (data
# set folder, fold folder pattern, modes file relative to the data set folder).
_SHARED = {
    "uwcse": ("boostsrl_uwcse", "fold{fold}", "background.txt"),
    "webkb": ("boostsrl_webkb", "fold{fold}", "background.txt"),
    "cora": ("boostsrl_cora", "fold{fold}", "background.txt"),
    "imdb": ("boostsrl_imdb", "workedunder_5fold/Fold{fold}",
             "workedunder_5fold/Fold{fold}/imdb_bk.txt"),
}


def load(name: str, fold: int = 1, *, data_dir=None) -> Tuple[Database, Database]:
    """A fold of one of the BoostSRL data sets srl ships in its data registry, as
    ``(train, test)`` databases with the data set's modes: the shape of
    ``relational_datasets.load(name, version, fold=...)``, which srlearn's later examples
    use, read from the shared data folder instead of downloaded.

    Parameters
    ----------
    name : {"uwcse", "webkb", "cora", "imdb"}
        The data set (``boostsrl_NAME``; IMDB is its ``workedunder`` 5-fold split).
    fold : int, 1 to 5
    data_dir : str or os.PathLike, optional
        The data folder (default: ``$SRL_DATA_DIR``); ``srl data fetch boostsrl_NAME
        --data-dir DIR`` downloads a missing data set and checks its sha256 sums.

    Returns
    -------
    train, test : srl.srlearn.Database
        ``pos``, ``neg``, ``facts`` lists of atom strings and ``modes`` (without the
        ``mode:`` prefix).

    Raises
    ------
    ValueError for an unknown name, a fold outside 1..5 or no data folder;
    FileNotFoundError naming the missing file.
    """
    if name not in _SHARED:
        raise ValueError(f"data set {name!r}: expected one of {', '.join(sorted(_SHARED))}")
    if isinstance(fold, bool) or not isinstance(fold, int) or not 1 <= fold <= 5:
        raise ValueError(f"fold = {fold!r}: expected a whole number from 1 to 5")
    root = data_dir if data_dir is not None else os.environ.get("SRL_DATA_DIR")
    if not root:
        raise ValueError("no data folder: pass data_dir=... or set SRL_DATA_DIR")
    folder, fold_dir, modes_file = _SHARED[name]
    base = Path(os.fspath(root)) / folder
    modes = []
    with open(base / modes_file.format(fold=fold), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("mode:"):
                line = line[len("mode:"):].strip()
            if line and "(" in line and ":" not in line.split("(")[0]:
                modes.append(line)
    out = []
    for split in ("train", "test"):
        db = Database()
        d = base / fold_dir.format(fold=fold) / split
        for key in ("pos", "neg", "facts"):
            with open(d / f"{split}_{key}.txt", encoding="utf-8") as f:
                setattr(db, key, [line.strip() for line in f if line.strip()])
        db.modes = list(modes)
        out.append(db)
    return out[0], out[1]
