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
from ._search import ClassifierCV

__all__ = ["Classifier", "ClassifierCV", "Regressor", "load",
           "load_svmlight", "as_data", "build_info", "__version__"]


def build_info():
    """How the extension's libhogtrain was built and which vector kernels
    this process runs, as `hogtrain --version` says it: a dict of
    "version", "build" ("native": -march=native, the kernels fixed at
    build time; "portable": the x86-64-v2 baseline of pip's build, the
    kernels picked at load time from the CPU), "march", "kernels" (the
    copy in use: "native", or an x86-64 level) and "lanes" ("avx2+fma" or
    "c")."""
    from ._hogtrain import build_info as words
    info = dict(w.split("=", 1) for w in words.split())
    info["version"] = __version__
    return info
