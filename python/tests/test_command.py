"""The package against the command on real data: the same options give
the same model (the same .hgm file, byte for byte), and a model saved from
Python predicts under `hogtrain predict` what it predicts in Python."""
import filecmp
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

import hogtrain


def _run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p


def _predictions(path):
    return np.loadtxt(path, ndmin=1)


@pytest.mark.parametrize("py, cli", [
    (dict(), []),
    (dict(loss="hinge", alpha=1e-4, epochs=3, random_state=7),
     ["--loss", "hinge", "--l2", "1e-4", "--epochs", "3", "--seed", "7"]),
    (dict(algorithm="cyclades", n_jobs=2, schedule="constant", eta=0.05),
     ["--algo", "cyclades", "--threads", "2", "--schedule", "constant",
      "--eta", "0.05"]),
    (dict(algorithm="dcd", loss="sqhinge", C=1.0, n_jobs=1),
     ["--algo", "dcd", "--loss", "sqhinge", "--C", "1", "--threads", "1"]),
    # newton's model does not depend on the thread count: two threads in
    # Python, one in the command
    (dict(algorithm="newton", C=1.0, tol=1e-4, n_jobs=2),
     ["--algo", "newton", "--C", "1", "--tol", "0.0001", "--threads", "1"]),
])
def test_a9a_model_equals_the_commands(dataset, hogtrain_bin, tmp_path, py,
                                       cli):
    train, test = dataset("a9a"), dataset("a9a.t")
    X, y = hogtrain.load_svmlight(train)
    Xt, yt = hogtrain.load_svmlight(test, n_features=X.shape[1])
    clf = hogtrain.Classifier(**py).fit(X, y)
    mine, theirs = str(tmp_path / "py.hgm"), str(tmp_path / "cli.hgm")
    clf.save(mine)
    _run(hogtrain_bin, "train", "-q", *cli, train, "-o", theirs)
    assert filecmp.cmp(mine, theirs, shallow=False), \
        "the .hgm files of Python and the command differ"
    # and the command predicts from Python's model what Python predicts
    _run(hogtrain_bin, "predict", mine, test, "-o", str(tmp_path / "p"))
    np.testing.assert_array_equal(_predictions(tmp_path / "p"),
                                  clf.predict(Xt))
    assert clf.score(Xt, yt) > 0.84


def test_multiclass_model_predicts_the_same_under_the_command(
        hogtrain_bin, tmp_path):
    # labels 3, 7 and 10, first seen in the order 7, 3, 10 (the model's
    # order), sorted in classes_
    rng = np.random.RandomState(0)
    centers = rng.normal(0, 2, (3, 8))
    lab = np.array([7, 3, 10])
    which = rng.randint(0, 3, 600)
    which[:3] = [0, 1, 2]
    X = centers[which] + rng.normal(0, 1, (600, 8))
    y = lab[which]
    path = tmp_path / "three.svm"
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write(f"{label} " + " ".join(f"{j + 1}:{v:.6g}"
                                           for j, v in enumerate(row)) + "\n")
    Xf, yf = hogtrain.load_svmlight(path)
    for mc in ("ovr", "softmax"):
        clf = hogtrain.Classifier(multiclass=mc).fit(Xf, yf)
        np.testing.assert_array_equal(clf.classes_, [3, 7, 10])
        assert clf.coef_.shape == (3, 8)
        clf.save(tmp_path / "m.hgm")
        _run(hogtrain_bin, "predict", str(tmp_path / "m.hgm"), str(path),
             "-o", str(tmp_path / "p"))
        np.testing.assert_array_equal(_predictions(tmp_path / "p"),
                                      clf.predict(Xf))
        back = hogtrain.load(tmp_path / "m.hgm")
        np.testing.assert_array_equal(back.classes_, clf.classes_)
        np.testing.assert_allclose(back.coef_, clf.coef_)
        np.testing.assert_array_equal(back.predict(Xf), clf.predict(Xf))
        np.testing.assert_allclose(back.predict_proba(Xf),
                                   clf.predict_proba(Xf))
        assert clf.score(Xf, yf) > 0.8


def test_a_model_of_the_command_loads_into_python(dataset, hogtrain_bin,
                                                  tmp_path):
    train, test = dataset("a9a"), dataset("a9a.t")
    m = str(tmp_path / "cli.hgm")
    _run(hogtrain_bin, "train", "-q", "--loss", "hinge", train, "-o", m)
    _run(hogtrain_bin, "predict", m, test, "-o", str(tmp_path / "p"))
    clf = hogtrain.load(m)
    assert clf.loss == "hinge" and not hasattr(clf, "predict_proba")
    Xt, _ = hogtrain.load_svmlight(test, n_features=clf.n_features_in_)
    np.testing.assert_array_equal(_predictions(tmp_path / "p"),
                                  clf.predict(Xt))


def test_regressor_equals_the_command(dataset, hogtrain_bin, tmp_path):
    train = dataset("abalone_scale")
    X, y = hogtrain.load_svmlight(train)
    reg = hogtrain.Regressor().fit(X, y)
    mine, theirs = str(tmp_path / "py.hgm"), str(tmp_path / "cli.hgm")
    reg.save(mine)
    _run(hogtrain_bin, "train", "-q", "--loss", "squared", train, "-o", theirs)
    assert filecmp.cmp(mine, theirs, shallow=False)
    _run(hogtrain_bin, "predict", mine, train, "-o", str(tmp_path / "p"))
    np.testing.assert_allclose(_predictions(tmp_path / "p"), reg.predict(X),
                               rtol=1e-5)
    assert reg.score(X, y) > 0.4
    assert isinstance(hogtrain.load(mine), hogtrain.Regressor)


def test_interactions_survive_load_pickle_and_save(hogtrain_bin, tmp_path):
    """A model of the command with interactions (Vowpal Wabbit's -q),
    loaded, pickled and saved from Python, still crosses its rows: the
    same predictions under `hogtrain predict` (hog_model_spec carries
    them)."""
    import pickle
    rng = np.random.default_rng(3)
    lines = []
    for _ in range(400):
        u, a = rng.integers(0, 5, 2)
        lines.append(f"{1 if (u + a) % 2 else -1} |u u{u} |a a{a}")
    data, m, out = tmp_path / "d.vw", tmp_path / "cli.hgm", tmp_path / "py.hgm"
    data.write_text("\n".join(lines) + "\n")
    _run(hogtrain_bin, "train", "-q", str(data), "--interactions", "ua",
         "-o", str(m))
    clf = hogtrain.load(str(m))
    assert clf._model.describe()["interactions"] == "ua"
    back = pickle.loads(pickle.dumps(clf))
    assert back._model.describe()["interactions"] == "ua"
    back.save(str(out))
    for model, p in ((m, "p1"), (out, "p2")):
        _run(hogtrain_bin, "predict", str(model), str(data), "-o",
             str(tmp_path / p))
    np.testing.assert_array_equal(_predictions(tmp_path / "p1"),
                                  _predictions(tmp_path / "p2"))
    assert "interactions     ua" in _run(hogtrain_bin, "info",
                                         str(out)).stdout
