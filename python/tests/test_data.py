"""Data in and out: zero-copy where the types are hogtrain's, conversions
where not, bad matrices refused with a sentence, files read by the C
parser into scipy matrices over its own arrays."""
import os
import re
import subprocess
import sys

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


# A child process per case: a matrix scipy's routines would trust (a crash
# there would kill pytest) is corrupted, then handed to as_data, to fit
# and to a fitted model's predict; each must print a ValueError.
_CHILD = """
import numpy as np, scipy.sparse as sp
import hogtrain
from hogtrain import _hogtrain as _h
X = sp.random(200, 30, density=0.2, format="csr", dtype=np.float32,
              random_state=0)
y = np.where(np.arange(200) % 2, 1.0, -1.0).astype(np.float32)
fitted = hogtrain.Classifier(epochs=1).fit(X, y)
X.indices[:] = X.indices[::-1].copy()  # not canonical: scipy sums them
X.has_sorted_indices = False
calls = [lambda: hogtrain.as_data(X, y),
         lambda: hogtrain.Classifier(epochs=1).fit(X, y),
         lambda: fitted.predict(X)]
{make}
for call in calls:
    try:
        call()
        print("accepted")
    except ValueError as e:
        print("ValueError:", e)
"""


@pytest.mark.parametrize("make, sentence", [
    ("X.indptr[100] = X.indptr[99] - 2",
     r"the row offsets \(indptr\) are not a CSR matrix's: indptr\[100\] = "
     r"\d+ is below the one before it \(\d+\)"),
    ("X.indptr[-1] = 0",
     r"row offsets \(indptr\) are not a CSR matrix's: indptr\[200\] = 0 "
     r"is below"),
    ("X.indptr[-1] += 5",
     r"the row offsets \(indptr\) end at \d+ but there are \d+ feature "
     r"indices"),
    ("X.indptr = X.indptr[:-1]",
     r"the row offsets \(indptr\) are 200 numbers for 200 rows"),
    ("X.indptr[0] = 1",
     r"indptr\[0\] = 1 \(the first must be 0\)"),
    ("X.data = X.data[:-1]", r"feature indices but \d+ values"),
    ("X.indices[7] = 30",
     r"row \d+: the feature index 30 is not below the number of columns "
     r"\(30 columns\)"),
    ("X.indices[7] = -3", r"row \d+: the feature index -3 is negative"),
    ("X = X.tocsc(); X.indices[5] = 10**6",
     r"column 0: the row index 1000000 is not below the number of rows "
     r"\(200 rows\)"),
    ("X = X.tocsc(); X.indptr[-1] = 0",
     r"the column offsets \(indptr\) are not a CSC matrix's"),
    ("X = X.tocoo(); X.row[5] = 10**7",
     r"entry 5: the row index 10000000 is not below the number of rows"),
    ("X = X.tocoo(); X.col[3] = -4",
     r"entry 3: the column index -4 is negative \(30 columns\)"),
    # the extension itself: a uint64 last offset past INT64_MAX
    ("calls = [lambda: _h.Data(np.array([0, 2**63 + 5], np.uint64), "
     "np.zeros(1, np.int32), np.ones(1, np.float32), y[:1], 3)]",
     r"the row offsets end at 9223372036854775813 but there are 1 feature "
     r"indices"),
])
def test_a_broken_sparse_structure_is_a_value_error_not_a_crash(make,
                                                                 sentence):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(hogtrain.__file__))] +
        [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-c", _CHILD.replace("{make}", make)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (f"the child exited {r.returncode} "
                               f"(-6: an abort, -11: a segfault): "
                               f"{r.stderr[-2000:]}")
    lines = r.stdout.splitlines()
    assert lines, r.stderr[-2000:]
    for line in lines:
        assert re.search(sentence, line), line


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
        assert a.flags.writeable
    # the matrix outlives the loader's handle and trains in place
    d = hogtrain.as_data(X, y)
    assert d.borrowed == ALL & ~_h.BORROW_INDPTR


def _change_loaded(path):
    """Loads path, zeroes every 7th value, drops them (eliminate_zeros, in
    place) and negates the labels: the arrays are writable, and the
    matrix is the one expected and trains."""
    X, y = hogtrain.load_svmlight(path)
    want = X.copy()
    want.data[::7] = 0
    want.eliminate_zeros()
    X.data[::7] = 0
    X.eliminate_zeros()
    assert X.nnz == want.nnz and (X != want).nnz == 0
    y_was = y.copy()
    y *= -1
    np.testing.assert_array_equal(y, -y_was)
    clf = hogtrain.Classifier(epochs=1).fit(X, y)
    assert clf.score(X, y) > 0.7


def test_load_svmlight_arrays_can_be_changed(dataset):
    _change_loaded(dataset("a9a"))


def test_load_svmlight_arrays_of_a_hgb_file_can_be_changed(
        dataset, tmp_path, hogtrain_bin):
    hgb = str(tmp_path / "a9a.hgb")
    subprocess.run([hogtrain_bin, "convert", dataset("a9a"), hgb],
                   check=True, capture_output=True)
    with open(hgb, "rb") as f:
        before = f.read()
    _change_loaded(hgb)
    # the arrays were read, not mapped under a read lease (which would
    # refuse this open, and copy the arrays away under the writes)
    X, y = hogtrain.load_svmlight(hgb)
    fd = os.open(hgb, os.O_RDWR | os.O_NONBLOCK)
    os.close(fd)
    X.data[:] = 0
    with open(hgb, "rb") as f:
        assert f.read() == before, "a write into X reached the file"


def test_a_data_set_whose_arrays_were_handed_out_is_not_used(dataset):
    d = _h.load(dataset("a9a"), own_arrays=True)
    _, _, _, y = d.arrays()
    np.frombuffer(y, np.float32)[:] = 7  # the library's label scan is stale
    with pytest.raises(ValueError, match="handed out to be changed"):
        _h.train(d, {"epochs": 1})
    # without own_arrays they are handed out read-only, and it is used
    kept = _h.load(dataset("a9a"))
    assert memoryview(kept.arrays()[3]).readonly
    _h.train(kept, {"epochs": 1})


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
