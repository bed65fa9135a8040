"""Import a library without the optional extras it would pull in on its own.

Some libraries import every optional package they find installed, whether or not anything
will use it: thinc (spaCy's machine-learning layer) imports PyTorch at start-up when it is
installed (`thinc/compat.py`), 1.3 s and about 180 MiB that spaCy's CNN pipelines never touch;
NLTK imports scikit-learn (and with it SciPy and pandas, about 1 s and 135 MiB) for two
wrappers no extractor uses (`nltk.classify.scikitlearn`, `nltk.parse.transitionparser`). Both
guard those imports with `try/except ImportError`, so while `hidden(...)` is active an import of
a hidden, not yet imported package raises ImportError, exactly as if it were not installed.
Afterwards it imports normally again: benepar still gets PyTorch when a model needs it.

The price: the library that was imported under `hidden` keeps thinking the package is absent
(thinc's PyTorch wrappers, NLTK's scikit-learn classifier stay off in that process). Nothing
in this project uses those.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["hidden", "import_spacy"]


@contextmanager
def hidden(*names: str) -> Iterator[None]:
    """Within the block, `import name` fails for each of `names` not imported already."""
    blocked = [n for n in names if n not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # the import system's own "not importable" marker
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def import_spacy():
    """spaCy, imported without PyTorch (see above): every project module imports it this way."""
    with hidden("torch"):
        import spacy
    return spacy
