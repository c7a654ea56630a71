"""Data in and out: zero-copy where the types are hogtrain's, conversions
where not, bad matrices refused with a sentence, files read by the C
parser into scipy matrices over its own arrays."""
import os

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import hogtrain
from hogtrain import _hogtrain as _h

ALL = _h.BORROW_INDPTR | _h.BORROW_INDICES | _h.BORROW_VALUES | _h.BORROW_LABELS


def _small(dtype=np.float32):
    X = sp.random(50, 30, density=0.2, format="csr", dtype=dtype,
                  random_state=0)
    y = np.where(np.arange(50) % 2, 1.0, -1.0).astype(np.float32)
    return X, y


def test_hogtrain_types_are_used_in_place():
    X, y = _small()
    indptr = X.indptr.astype(np.int64)
    d = _h.Data(indptr, X.indices.astype(np.int32), X.data, y, 30)
    assert d.borrowed == ALL
    assert (d.rows, d.cols, d.nnz) == (50, 30, X.nnz)
    # the same through as_data, with a scipy matrix holding int64 offsets
    X.indptr = indptr
    assert hogtrain.as_data(X, y).borrowed == ALL


def test_other_types_are_converted():
    X, y = _small(np.float64)
    assert X.indptr.dtype == np.int32  # scipy's usual offsets
    d = hogtrain.as_data(X, y.astype(np.float64))
    assert d.borrowed == _h.BORROW_INDICES
    d = hogtrain.as_data(X.astype(np.float32), y)
    assert d.borrowed == ALL & ~_h.BORROW_INDPTR
    # and train the same model as the in-place arrays
    a = hogtrain.Classifier().fit(X, y)
    b = hogtrain.Classifier().fit(X.astype(np.float32), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_a_zero_copy_fit_equals_a_dense_fit():
    X, y = _small()
    a = hogtrain.Classifier().fit(X, y)
    b = hogtrain.Classifier().fit(X.toarray(), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_unsorted_and_duplicate_indices_are_made_canonical():
    # row 0 holds column 3 twice and its indices out of order
    X = sp.csr_matrix((np.array([1, 2, 3, 4], np.float32),
                       np.array([3, 1, 3, 0], np.int32),
                       np.array([0, 3, 4], np.int32)), shape=(2, 5))
    y = np.array([1, -1], np.float32)
    Xc = X.copy()
    Xc.sum_duplicates()
    a = hogtrain.Classifier(epochs=2).fit(X, y)
    b = hogtrain.Classifier(epochs=2).fit(Xc, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="increase strictly"):
        _h.Data(X.indptr, X.indices, X.data, y, 5)


@pytest.mark.parametrize("what, make, sentence", [
    ("NaN value", lambda X: X.data.__setitem__(3, np.nan),
     r"row \d+, feature \d+: the value NaN is not a finite number"),
    ("infinite value", lambda X: X.data.__setitem__(0, np.inf),
     "not a finite number"),
    ("negative index", lambda X: X.indices.__setitem__(0, -1),
     "row 0: the feature index -1 is negative"),
    ("index past the columns", lambda X: X.indices.__setitem__(-1, 30),
     "is not below the number of columns"),
])
def test_bad_arrays_are_a_value_error_with_a_sentence(what, make, sentence):
    X, y = _small()
    X.sort_indices()
    make(X)
    with pytest.raises(ValueError, match=sentence):
        _h.Data(X.indptr, X.indices, X.data, y, 30)


def test_bad_shapes_are_a_value_error():
    X, y = _small()
    with pytest.raises(ValueError, match="49 labels for 50 rows"):
        _h.Data(X.indptr, X.indices, X.data, y[:-1], 30)
    with pytest.raises(ValueError, match="row offsets end at"):
        _h.Data(X.indptr, X.indices[:-1], X.data, y, 30)
    with pytest.raises(ValueError, match="there are .* values"):
        _h.Data(X.indptr, X.indices, X.data[:-1], y, 30)
    bad = X.indptr.copy()
    bad[5] = bad[4] - 1
    with pytest.raises(ValueError, match="row offsets are not a CSR"):
        _h.Data(bad, X.indices, X.data, y, 30)
    with pytest.raises(ValueError, match="one-dimensional"):
        _h.Data(X.indptr, X.indices, X.toarray(), y, 30)
    with pytest.raises(ValueError, match="element type"):
        _h.Data(X.indptr, X.indices.astype(np.int16), X.data, y, 30)


def test_the_estimators_refuse_bad_input_with_a_sentence():
    X, y = _small()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        hogtrain.Classifier().fit(X, y[:-1])
    D = X.toarray()
    D[2, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        hogtrain.Classifier().fit(D, y)
    clf = hogtrain.Classifier().fit(X, y)
    with pytest.raises(ValueError, match="30 features"):
        clf.predict(X[:, :20])
    with pytest.raises(ValueError, match="sample_weight must be finite"):
        hogtrain.Classifier().fit(X, y, sample_weight=-np.ones(50))
    with pytest.raises(ValueError, match="algorithm must be one of"):
        hogtrain.Classifier(algorithm="sgd").fit(X, y)
    with pytest.raises(ValueError, match="alpha must be a finite number"):
        hogtrain.Classifier(alpha=-1).fit(X, y)


def test_load_svmlight_equals_sklearns_loader(dataset):
    path = dataset("a9a")
    X, y = hogtrain.load_svmlight(path)
    Xs, ys = load_svmlight_file(path)
    assert X.shape == Xs.shape and X.dtype == np.float32
    assert (X != Xs.astype(np.float32)).nnz == 0
    np.testing.assert_array_equal(y, ys)


def test_load_svmlight_hands_out_the_parsers_arrays(dataset):
    X, y = hogtrain.load_svmlight(dataset("a9a"))
    for a in (X.data, X.indices, y):
        base = a
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        assert type(base).__name__ == "View", "a copy, not the parser's array"
        assert not a.flags.writeable
    # the matrix outlives the loader's handle and trains in place
    d = hogtrain.as_data(X, y)
    assert d.borrowed == ALL & ~_h.BORROW_INDPTR


def test_load_svmlight_reads_compressed_and_hgb_files(dataset, tmp_path,
                                                      hogtrain_bin):
    import subprocess
    plain = dataset("a9a")
    X, y = hogtrain.load_svmlight(plain)
    hgb = str(tmp_path / "a9a.hgb")
    subprocess.run([hogtrain_bin, "convert", plain, hgb], check=True,
                   capture_output=True)
    for path in (os.path.join(os.path.dirname(plain), "a9a.xz")
                 if os.path.exists(os.path.join(os.path.dirname(plain),
                                                "a9a.xz")) else plain, hgb):
        X2, y2 = hogtrain.load_svmlight(path)
        assert (X2 != X).nnz == 0
        np.testing.assert_array_equal(y2, y)


def test_load_svmlight_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        hogtrain.load_svmlight(tmp_path / "absent.svm")
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 3:1\n-1 2:x\n")
    with pytest.raises(ValueError, match="bad.svm:2"):
        hogtrain.load_svmlight(bad)
