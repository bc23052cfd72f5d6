"""Toy data sets of srlearn 0.5.5 (``srlearn.datasets``): ``load_toy_cancer`` and
``load_toy_father``, each returning ``(train, test)`` as :class:`srl.srlearn.Database`.

The atoms are the data of srlearn's two built-in data sets (Hayes 2019, "srlearn: A
Python library for gradient-boosted statistical relational models"; the smokers /
friends and family toy domains), kept here as data so that srlearn's README
quick-start runs unchanged on ``srl.srlearn``."""

from __future__ import annotations

from typing import Dict, List, Tuple

from . import Database

__all__ = ["load_toy_cancer", "load_toy_father"]

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
