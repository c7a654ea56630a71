"""hogtrain: fast training of large sparse linear models, from Python.

    import hogtrain
    X, y = hogtrain.load_svmlight("a9a")          # scipy CSR, float32 labels
    clf = hogtrain.Classifier(algorithm="hogwild").fit(X, y)
    clf.score(X, y); clf.save("a9a.hgm")          # `hogtrain predict` reads it
    clf2 = hogtrain.load("a9a.hgm")

Classifier and Regressor are scikit-learn estimators over libhogtrain's C
API (the extension hogtrain._hogtrain); see docs/PYTHON.md.
"""
from ._hogtrain import version as __version__
from ._data import as_data, load_svmlight
from ._estimators import Classifier, Regressor, load

__all__ = ["Classifier", "Regressor", "load", "load_svmlight", "as_data",
           "__version__"]
