"""Data in and out: scipy and numpy matrices as hogtrain data sets (used in
place where their types are hogtrain's), and LIBSVM/SVMlight, Vowpal Wabbit
and .hgb files as scipy CSR matrices over the parser's own arrays."""
import os

import numpy as np
import scipy.sparse as sp

from . import _hogtrain as _h


def threads(n_jobs):
    """hogtrain's thread count for a scikit-learn n_jobs: None or -1 all
    cores (0), k > 0 k threads, -k (k > 1) all but k - 1."""
    if n_jobs is None or n_jobs == -1:
        return 0
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(
            n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None, -1, a positive number of "
                         f"threads or -k for all cores but k - 1 "
                         f"(got {n_jobs!r})")
    if n_jobs > 0:
        return int(n_jobs)
    return max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))


def canonical_csr(X):
    """X as a CSR matrix whose rows' indices increase strictly (what
    hogtrain takes): X itself when it is one; a canonical copy otherwise
    (duplicates summed, as scipy does)."""
    if not sp.isspmatrix_csr(X):
        X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def as_data(X, y=None, n_jobs=None):
    """A hogtrain data set (hogtrain._hogtrain.Data) over X (a scipy sparse
    matrix or a 2-D array) and the labels y (or None: data to score).

    CSR arrays already in hogtrain's types are used in place: int64 row
    offsets, int32 indices, float32 values and labels (scipy's int32
    offsets are converted, rows + 1 numbers); others are converted once.
    `data.borrowed` says which (the BORROW_ bits). The arrays must not
    change while the data set lives; it holds references to them."""
    X = canonical_csr(X)
    if y is not None:
        y = np.ascontiguousarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"{y.shape[0] if y.ndim else 0} labels for "
                             f"{X.shape[0]} rows: one label per row")
    return _h.Data(np.ascontiguousarray(X.indptr),
                   np.ascontiguousarray(X.indices),
                   np.ascontiguousarray(X.data), y, int(X.shape[1]),
                   threads(n_jobs))


def _frombuffer(view, dtype):
    return np.frombuffer(view, dtype=dtype)


def load_svmlight(path, zero_based=False, n_features=None, n_jobs=None,
                  hash_bits=0, hash_seed=0):
    """Reads LIBSVM/SVMlight or Vowpal Wabbit text (plain, gzip, xz or
    zstd, told apart by content) or a .hgb cache with hogtrain's parallel
    parser; returns (X, y): a scipy CSR matrix of float32 values and the
    float32 labels.

    X's values and indices and y are the parser's own arrays, not copies
    (read-only: X.copy() for a matrix to change); the row offsets are
    int32 when they fit, as scipy keeps them beside int32 indices (a copy
    of rows + 1 numbers). Indices are 1-based as in LIBSVM files (index 1
    is column 0) unless zero_based. n_features: at least this many
    columns. hash_bits B > 0 hashes the features into 2^B columns
    (docs/FORMATS.md, "Hashing"); VW text is always hashed."""
    path = os.fspath(path)
    if path != "-":
        os.stat(path)  # FileNotFoundError / PermissionError with the path
    d = _h.load(path, bool(zero_based), threads(n_jobs),
                int(n_features or 0), int(hash_bits), int(hash_seed))
    ptr, idx, val, lab = d.arrays()
    rows, cols, nnz = d.rows, d.cols, d.nnz
    indptr = _frombuffer(ptr, np.uint64)
    if nnz < 2**31 and cols < 2**31:
        indptr = indptr.astype(np.int32)
        indices = _frombuffer(idx, np.int32)
    else:
        indptr = indptr.view(np.int64)
        indices = _frombuffer(idx, np.uint32).astype(np.int64)
    values = (_frombuffer(val, np.float32) if val is not None
              else np.ones(nnz, np.float32))
    y = _frombuffer(lab, np.float32)
    X = sp.csr_matrix((values, indices, indptr), shape=(rows, cols),
                      copy=False)
    return X, y
