"""What the command has, from the estimators (docs/PYTHON.md, "scikit-learn's
names" and "Early stopping and the search of C"): scikit-learn's parameter
names as aliases of hogtrain's, early stopping and the C search, each the
same model as its hogtrain name or as the command's."""
import filecmp
import json
import subprocess

import numpy as np
import pytest
from sklearn.base import clone

import hogtrain


def _run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def a9a(dataset):
    return hogtrain.load_svmlight(dataset("a9a"))


# (scikit-learn's names, hogtrain's): the same problem, the same model
ALIASES = [
    (dict(max_iter=3), dict(epochs=3)),
    (dict(eta0=0.05), dict(eta=0.05)),
    (dict(learning_rate="invscaling", eta0=0.05, power_t=0.3),
     dict(schedule="invscaling", eta=0.05, power=0.3)),
    (dict(learning_rate="adagrad"), dict(schedule="adagrad")),
    (dict(penalty="l2", alpha=1e-4), dict(alpha=1e-4)),
    (dict(penalty="l2"), dict()),
    (dict(penalty="l1", alpha=1e-4), dict(alpha=0.0, l1=1e-4)),
    (dict(penalty="elasticnet", alpha=1e-4, l1_ratio=0.25),
     dict(alpha=(1 - 0.25) * 1e-4, l1=0.25 * 1e-4)),
    (dict(early_stopping=True, max_iter=30),
     dict(holdout=0.1, early_stop=5, epochs=30)),
    (dict(early_stopping=True, validation_fraction=0.2, n_iter_no_change=2,
          max_iter=30),
     dict(holdout=0.2, early_stop=2, epochs=30)),
    # without early_stopping, scikit-learn's two are not used (its
    # validation_fraction is not; its n_iter_no_change would watch the
    # training loss, which hogtrain's SGD does not)
    (dict(validation_fraction=0.2, n_iter_no_change=2), dict()),
]


@pytest.mark.parametrize("sk, hog", ALIASES)
def test_an_alias_gives_the_model_of_hogtrains_name(a9a, sk, hog):
    X, y = a9a
    a = hogtrain.Classifier(**sk).fit(X, y)
    b = hogtrain.Classifier(**hog).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    assert a.n_iter_ == b.n_iter_


def test_regressor_takes_the_aliases(dataset):
    X, y = hogtrain.load_svmlight(dataset("abalone_scale"))
    a = hogtrain.Regressor(penalty="l1", alpha=1e-3, eta0=0.01,
                           learning_rate="constant").fit(X, y)
    b = hogtrain.Regressor(alpha=0.0, l1=1e-3, eta=0.01,
                           schedule="constant").fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_


@pytest.mark.parametrize("name, alias, value", [
    ("eta", "eta0", 0.1), ("schedule", "learning_rate", "constant"),
    ("power", "power_t", 0.5), ("holdout", "validation_fraction", 0.1),
    ("early_stop", "n_iter_no_change", 3), ("epochs", "max_iter", 3),
])
def test_an_alias_and_its_name_together_are_refused(name, alias, value):
    clf = hogtrain.Classifier(**{name: value, alias: value})
    with pytest.raises(ValueError, match=f"{name} and {alias} are one "
                                         f"parameter"):
        clf._opts()


def test_penalty_and_its_strengths_refuse_what_contradicts():
    with pytest.raises(ValueError, match="l1 and penalty"):
        hogtrain.Classifier(penalty="l2", l1=1e-4)._opts()
    with pytest.raises(ValueError, match="l1_ratio applies to "
                                         "penalty='elasticnet'"):
        hogtrain.Classifier(penalty="l1", l1_ratio=0.5)._opts()
    with pytest.raises(ValueError, match="l1_ratio must be"):
        hogtrain.Classifier(penalty="elasticnet", l1_ratio=1.5)._opts()
    with pytest.raises(ValueError, match="penalty must be one of"):
        hogtrain.Classifier(penalty="l3")._opts()
    for rate in ("optimal", "adaptive"):
        with pytest.raises(ValueError, match=f"learning_rate='{rate}' has "
                                             f"no hogtrain schedule"):
            hogtrain.Classifier(learning_rate=rate)._opts()
    with pytest.raises(ValueError, match="early_stop watches the "
                                         "validation loss"):
        hogtrain.Classifier(early_stop=3)._opts()


def test_aliases_survive_get_params_set_params_and_clone():
    clf = hogtrain.Classifier(penalty="elasticnet", l1_ratio=0.3, eta0=0.1,
                              learning_rate="invscaling",
                              early_stopping=True, n_iter_no_change=4)
    back = clone(clf)
    assert back.get_params() == clf.get_params()
    assert back._opts() == clf._opts()
    back.set_params(penalty="l1", l1_ratio=None, eta0=None, eta=0.2)
    assert back._opts()["eta"] == 0.2 and back._opts()["l2"] == 0.0


def test_early_stopping_stops_and_equals_the_commands(a9a, dataset,
                                                      hogtrain_bin,
                                                      tmp_path):
    X, y = a9a
    clf = hogtrain.Classifier(early_stopping=True, validation_fraction=0.2,
                              n_iter_no_change=2, max_iter=50).fit(X, y)
    assert clf.n_iter_ < 50, "early stopping ran every epoch"
    mine, theirs = str(tmp_path / "py.hgm"), str(tmp_path / "cli.hgm")
    clf.save(mine)
    _run(hogtrain_bin, "train", "-q", "--holdout", "0.2", "--early-stop",
         "2", "--epochs", "50", dataset("a9a"), "-o", theirs)
    assert filecmp.cmp(mine, theirs, shallow=False), \
        "the .hgm files of Python and the command differ"


def test_classifiercv_finds_the_commands_C(dataset, hogtrain_bin, tmp_path):
    path = dataset("heart_scale")
    X, y = hogtrain.load_svmlight(path)
    clf = hogtrain.ClassifierCV(cv=5).fit(X, y)
    report, theirs = str(tmp_path / "r.json"), str(tmp_path / "cli.hgm")
    _run(hogtrain_bin, "train", "-q", "--cv", "5", "--search-C", path,
         "--json", report, "-o", theirs)
    with open(report) as f:
        search = json.load(f)["search_C"]
    assert clf.C_ == search["best_C"]
    np.testing.assert_array_equal(clf.Cs_, [s["C"] for s in search["steps"]])
    # the report's accuracies are rounded to print
    np.testing.assert_allclose(clf.scores_,
                               [s["accuracy"] for s in search["steps"]],
                               rtol=1e-9)
    assert clf.C_ == clf.Cs_[np.argmax(clf.scores_)]
    # and the fit at that C is the command's -o model
    mine = str(tmp_path / "py.hgm")
    clf.save(mine)
    assert filecmp.cmp(mine, theirs, shallow=False)
    # the same as a Classifier at the C found
    plain = hogtrain.Classifier(C=clf.C_).fit(X, y)
    np.testing.assert_array_equal(clf.coef_, plain.coef_)


def test_classifiercv_searches_the_l1_strength(dataset, hogtrain_bin,
                                               tmp_path):
    path = dataset("heart_scale")
    X, y = hogtrain.load_svmlight(path)
    # the command's --reg says what --C sets, and --C is the first C
    clf = hogtrain.ClassifierCV(penalty="l1", C_min=0.5).fit(X, y)
    report = str(tmp_path / "r.json")
    _run(hogtrain_bin, "train", "-q", "--cv", "5", "--search-C", "--reg",
         "l1", "--C", "0.5", path, "--json", report)
    with open(report) as f:
        search = json.load(f)["search_C"]
    assert search["regularization"] == "l1"
    assert clf.C_ == search["best_C"]


def test_classifiercv_with_sample_weight_is_the_commands_weights(
        dataset, hogtrain_bin, tmp_path):
    # the folds train with their rows' weights: the command's --weights
    path = dataset("heart_scale")
    X, y = hogtrain.load_svmlight(path)
    w = (np.arange(len(y)) % 4 + 1) / 2.0
    weights = tmp_path / "w.txt"
    weights.write_text("".join(f"{v}\n" for v in w))
    clf = hogtrain.ClassifierCV(cv=5).fit(X, y, sample_weight=w)
    report, theirs = str(tmp_path / "r.json"), str(tmp_path / "cli.hgm")
    _run(hogtrain_bin, "train", "-q", "--cv", "5", "--search-C", path,
         "--weights", str(weights), "--json", report, "-o", theirs)
    with open(report) as f:
        search = json.load(f)["search_C"]
    assert clf.C_ == search["best_C"]
    np.testing.assert_allclose(clf.scores_,
                               [s["accuracy"] for s in search["steps"]],
                               rtol=1e-9)
    mine = str(tmp_path / "py.hgm")
    clf.save(mine)
    assert filecmp.cmp(mine, theirs, shallow=False)
    # and the weights count: not the unweighted search's figures
    plain = hogtrain.ClassifierCV(cv=5).fit(X, y)
    assert not np.array_equal(plain.scores_[:len(clf.scores_)],
                              clf.scores_[:len(plain.scores_)])


def test_hash_columns_is_the_loaders_hashing(a9a, dataset):
    from hogtrain._data import hash_columns
    X, _ = a9a
    for bits in (18, 6):  # 6: 123 features on 64 columns, many collide
        H, _ = hogtrain.load_svmlight(dataset("a9a"), hash_bits=bits)
        G = hash_columns(X, bits)
        assert G.shape == H.shape
        np.testing.assert_array_equal(G.indptr, H.indptr)
        np.testing.assert_array_equal(G.indices, H.indices)
        np.testing.assert_array_equal(G.data, H.data)


@pytest.mark.parametrize("bits", [18, 6])
def test_hashing_gives_the_commands_hashed_model(a9a, dataset, hogtrain_bin,
                                                 tmp_path, bits):
    import pickle
    X, y = a9a
    clf = hogtrain.Classifier(hash_bits=bits).fit(X, y)
    assert clf.coef_.shape == (1, 2**bits)
    mine, theirs = str(tmp_path / "py.hgm"), str(tmp_path / "cli.hgm")
    clf.save(mine)
    _run(hogtrain_bin, "train", "-q", "--hash-bits", str(bits),
         dataset("a9a"), "-o", theirs)
    assert filecmp.cmp(mine, theirs, shallow=False)
    # n_features = 2^B is the same parameter (FeatureHasher's name)
    other = hogtrain.Classifier(n_features=2**bits).fit(X, y)
    np.testing.assert_array_equal(other.coef_, clf.coef_)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(X),
                                  clf.decision_function(X))
    with pytest.raises(ValueError, match="hash_bits and n_features"):
        hogtrain.Classifier(hash_bits=bits, n_features=2**bits).fit(X, y)
    with pytest.raises(ValueError, match="n_features must be a power of "
                                         "two"):
        hogtrain.Classifier(n_features=1000).fit(X, y)
