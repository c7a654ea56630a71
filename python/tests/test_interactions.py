"""Interactions from Python (docs/PYTHON.md, "Interactions"): a namespace
per column, the command's --interactions (pairs and triples) and VW's
quadratic and cubic, the same model file as the command's on a9a written
as Vowpal Wabbit text in three namespaces, and what is refused."""
import filecmp
import pickle
import subprocess

import numpy as np
import pytest
from sklearn.base import clone

import hogtrain

ROWS = 5000


def _run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def a9a_vw(dataset, tmp_path_factory):
    """a9a's first rows as VW text in three namespaces (a: features 1-41,
    b: 42-82, c: 83-123), as tests/test_cross_cubic.c writes them."""
    path = tmp_path_factory.mktemp("vw") / "a9a.vw"
    with open(dataset("a9a")) as src, open(path, "w") as out:
        for n, line in enumerate(src):
            if n == ROWS:
                break
            label, *feats = line.split()
            parts = [label]
            for k, ns in enumerate("abc"):
                parts.append("|" + ns)
                for f in feats:
                    i, v = f.split(":")
                    if (int(i) - 1) // 41 == k:
                        parts.append(f"f{i}:{v}")
            out.write(" ".join(parts) + "\n")
    return str(path)


@pytest.mark.parametrize("py, cli", [
    (dict(interactions="abc"), ["--interactions", "abc"]),
    # VW's names: -q ab and --cubic abc together
    (dict(quadratic=["ab", "bc"], cubic="abc", loss="hinge",
          random_state=5), ["--interactions", "ab,bc,abc", "--loss", "hinge",
                            "--seed", "5"]),
])
def test_interactions_model_equals_the_commands(a9a_vw, hogtrain_bin,
                                                tmp_path, py, cli):
    X, y, ns = hogtrain.load_svmlight(a9a_vw, namespaces=True)
    assert X.shape[1] == 2**18 and set(ns) == set(" abc")
    clf = hogtrain.Classifier(feature_namespaces=ns, **py).fit(X, y)
    mine, theirs = str(tmp_path / "py.hgm"), str(tmp_path / "cli.hgm")
    clf.save(mine)
    _run(hogtrain_bin, "train", "-q", *cli, a9a_vw, "-o", theirs)
    assert filecmp.cmp(mine, theirs, shallow=False), \
        "the .hgm files of Python and the command differ"
    _run(hogtrain_bin, "predict", theirs, a9a_vw, "-o", str(tmp_path / "p"))
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "p"),
                                  clf.predict(X))
    # the crossed features are learnt: better than without on these rows
    plain = hogtrain.Classifier(**{k: v for k, v in py.items() if k in
                                   ("loss", "random_state")}).fit(X, y)
    assert clf.score(X, y) > plain.score(X, y) + 0.01


def test_pickle_clone_and_load_carry_the_interactions(a9a_vw, tmp_path):
    X, y, ns = hogtrain.load_svmlight(a9a_vw, namespaces=True)
    clf = hogtrain.Classifier(feature_namespaces=ns, interactions="ab,abc")
    clf.fit(X, y)
    scores = clf.decision_function(X)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(X), scores)
    np.testing.assert_array_equal(back.predict_proba(X),
                                  clf.predict_proba(X))
    again = clone(clf).fit(X, y)
    assert again.get_params()["interactions"] == "ab,abc"
    np.testing.assert_array_equal(again.decision_function(X), scores)
    # the model file records the interactions, not the columns' namespaces
    clf.save(str(tmp_path / "m.hgm"))
    loaded = hogtrain.load(str(tmp_path / "m.hgm"))
    assert loaded.interactions == "ab,abc"
    with pytest.raises(ValueError, match="give feature_namespaces"):
        loaded.predict(X)
    loaded.set_params(feature_namespaces=ns)
    np.testing.assert_allclose(loaded.decision_function(X), scores,
                               rtol=1e-6)


def test_partial_fit_crosses_each_piece(a9a_vw):
    # the pieces' epochs are one epoch of fit over their concatenation
    X, y, ns = hogtrain.load_svmlight(a9a_vw, namespaces=True)
    kw = dict(feature_namespaces=ns, interactions="abc")
    whole = hogtrain.Classifier(epochs=1, shuffle=False, **kw).fit(X, y)
    part = hogtrain.Classifier(**kw)
    half = X.shape[0] // 2
    part.partial_fit(X[:half], y[:half], classes=np.unique(y))
    part.partial_fit(X[half:], y[half:])
    np.testing.assert_array_equal(part.coef_, whole.coef_)


def test_namespaces_of_a_matrix_by_column_ranges(dataset):
    # a9a's LIBSVM columns in three namespaces by a dict of ranges,
    # hashed by the estimator
    X, y = hogtrain.load_svmlight(dataset("a9a"))
    X, y = X[:ROWS], y[:ROWS]
    ns = {"a": range(0, 41), "b": range(41, 82), "c": slice(82, None)}
    kw = dict(hash_bits=18, random_state=3)
    cross = hogtrain.Classifier(feature_namespaces=ns, interactions="abc",
                                **kw).fit(X, y)
    plain = hogtrain.Classifier(**kw).fit(X, y)
    assert cross.coef_.shape == (1, 2**18)
    assert cross.score(X, y) > plain.score(X, y) + 0.01
    # the same namespaces as a string of one per column
    s = "a" * 41 + "b" * 41 + "c" * (X.shape[1] - 82)
    same = hogtrain.Classifier(feature_namespaces=s, interactions="abc",
                               **kw).fit(X, y)
    np.testing.assert_array_equal(same.coef_, cross.coef_)


@pytest.mark.parametrize("kw, says", [
    (dict(feature_namespaces="ab", interactions="ab"),
     "feature_namespaces has 2 namespaces for X's 4 columns"),
    (dict(feature_namespaces=["a", "bb", "a", "b"], interactions="ab"),
     "column 1's is 'bb'"),
    (dict(feature_namespaces={"a": [0, 1], "b": [1]}, interactions="ab"),
     "column 1 is in namespaces 'a' and 'b'"),
    (dict(feature_namespaces={"a": [0, 9]}, interactions="ab"),
     r"feature_namespaces\['a'\] names columns that X has not"),
    (dict(feature_namespaces="abab", interactions="abcd"),
     "interaction 'abcd' crosses 4 namespaces"),
    (dict(feature_namespaces="abab", interactions="ab,ba,ab"),
     "interaction 'ab' is asked twice"),
    (dict(feature_namespaces="abab", quadratic="abc"),
     "quadratic: the term 'abc' is not a pair"),
    (dict(feature_namespaces="abab", cubic=["ab"]),
     "cubic: the term 'ab' is not a triple"),
    (dict(feature_namespaces="abab", interactions=7),
     "interactions must be a string"),
    (dict(interactions="ab"), "give feature_namespaces"),
    (dict(feature_namespaces="abab", interactions="ab", hash_bits=1),
     r"columns \d \(namespace '.'\) and \d \(namespace '.'\) hash into one "
     r"column"),
])
def test_bad_namespaces_and_interactions_are_value_errors(kw, says):
    X = np.eye(4)[[0, 1, 2, 3] * 3] + 0.5
    y = np.array([0, 1] * 6)
    with pytest.raises(ValueError, match=says):
        hogtrain.Classifier(**dict(dict(hash_bits=4), **kw)).fit(X, y)


def test_interactions_need_hashed_columns():
    X = np.eye(3)[[0, 1, 2] * 2]
    with pytest.raises(ValueError, match="give hash_bits"):
        hogtrain.Classifier(feature_namespaces="abc",
                            interactions="ab").fit(X, [0, 1] * 3)


def test_two_namespaces_in_one_column_are_refused(tmp_path):
    # with 2^1 columns, x and y of two namespaces land in one
    path = tmp_path / "two.vw"
    path.write_text("1 |a x |b y\n-1 |a w |b v\n")
    X, y, ns = hogtrain.load_svmlight(str(path), hash_bits=8,
                                      namespaces=True)
    assert len(ns) == 256 and set(ns) == set(" ab")
    with pytest.raises(ValueError, match=r"feature \d+ holds entries of "
                       r"namespaces '.' \(row \d\) and '.' \(row \d\)"):
        hogtrain.load_svmlight(str(path), hash_bits=1, namespaces=True)
    svm = tmp_path / "a.svm"
    svm.write_text("1 1:1\n")
    with pytest.raises(ValueError, match="namespaces are kept of Vowpal "
                       "Wabbit text"):
        hogtrain.load_svmlight(str(svm), namespaces=True)
