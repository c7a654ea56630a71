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


# What a compressed format's arrays are called in its sentences: its
# offsets, the indices they delimit, and what those index.
_COMPRESSED = {
    "csr": ("row", "feature indices", "feature index", "columns"),
    "csc": ("column", "row indices", "row index", "rows"),
    "bsr": ("block row", "block column indices", "block column index",
            "block columns"),
}


def _integers(a, what):
    if not isinstance(a, np.ndarray) or a.ndim != 1 or \
            not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{what} must be a one-dimensional array of "
                         f"integers (got {type(a).__name__} "
                         f"{getattr(a, 'dtype', '')})")


def _in_range(idx, n, of, what, where):
    """Refuses the first entry of idx outside [0, n) (n of something) in
    the library's words, the place named by where(k)."""
    if idx.size == 0 or (idx.min() >= 0 and idx.max() < n):
        return
    k = int(np.flatnonzero((idx < 0) | (idx >= n))[0])
    why = "is negative" if idx[k] < 0 else f"is not below the number of {of}"
    raise ValueError(f"{where(k)}: the {what} {int(idx[k])} {why} "
                     f"({n} {of})")


def _check_compressed(X):
    fmt = X.format
    line, indices, index, of = _COMPRESSED[fmt]
    r, c = X.blocksize if fmt == "bsr" else (1, 1)
    major, minor = X.shape[0] // r, X.shape[1] // c
    if fmt == "csc":
        major, minor = minor, major
    ptr, idx = X.indptr, X.indices
    offsets = f"the {line} offsets (indptr)"
    _integers(ptr, offsets)
    _integers(idx, f"the {indices}")
    if len(ptr) != major + 1:
        raise ValueError(f"{offsets} are {len(ptr)} numbers for {major} "
                         f"{line}s: a {fmt.upper()} matrix of n {line}s has "
                         f"n + 1")
    if ptr[0] != 0:
        raise ValueError(f"{offsets} are not a {fmt.upper()} matrix's: "
                         f"indptr[0] = {int(ptr[0])} (the first must be 0)")
    down = np.flatnonzero(ptr[1:] < ptr[:-1])
    if len(down):
        i = int(down[0]) + 1
        raise ValueError(f"{offsets} are not a {fmt.upper()} matrix's: "
                         f"indptr[{i}] = {int(ptr[i])} is below the one "
                         f"before it ({int(ptr[i - 1])})")
    nnz = int(ptr[-1])
    if nnz > len(idx):
        raise ValueError(f"{offsets} end at {nnz} but there are "
                         f"{len(idx)} {indices}")
    if len(X.data) != len(idx):
        raise ValueError(f"there are {len(idx)} {indices} but "
                         f"{len(X.data)} values")
    # A CSR matrix's indices are checked by the library, which names the
    # row, in parallel; the conversions from the other formats index with
    # them first.
    if fmt != "csr":
        _in_range(idx[:nnz], minor, of, index, lambda k: f"{line} "
                  f"{int(np.searchsorted(ptr, k, side='right')) - 1}")


def check_structure(X):
    """X, when its arrays make the sparse matrix they claim to; a
    ValueError of one sentence saying what is wrong otherwise. scipy's
    own routines (has_canonical_format, sum_duplicates, tocsr) trust them
    and read or write past them (decreasing row offsets aborted the
    interpreter). O(rows) for CSR, whose indices hog_data_from_csr checks
    itself; O(nnz) for the formats converted here. Not a sparse matrix:
    X, as it is."""
    if not sp.issparse(X):
        return X
    if X.format in _COMPRESSED:
        _check_compressed(X)
    elif X.format == "coo":
        n = len(X.data)
        for a, axis, what in ((X.row, 0, "row"), (X.col, 1, "column")):
            _integers(a, f"the {what} indices")
            if len(a) != n:
                raise ValueError(f"there are {len(a)} {what} indices but "
                                 f"{n} values")
            _in_range(a, X.shape[axis], f"{what}s", f"{what} index",
                      lambda k: f"entry {k}")
    return X


def canonical_csr(X):
    """X as a CSR matrix whose rows' indices increase strictly (what
    hogtrain takes): X itself when it is one; a canonical copy otherwise
    (duplicates summed, as scipy does). X's arrays are checked first
    (check_structure)."""
    check_structure(X)
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


def _rotl(x, r):
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def hash_index(j, seed=0):
    """The hash of the 0-based feature indices j (an integer array): the
    library's hog_hash_index, MurmurHash3 (x86, 32 bits) of each index's
    4 bytes, little-endian (docs/FORMATS.md, "Hashing")."""
    with np.errstate(over="ignore"):
        k = np.asarray(j).astype(np.uint32) * np.uint32(0xcc9e2d51)
        k = _rotl(k, 15) * np.uint32(0x1b873593)
        h = _rotl(np.uint32(seed) ^ k, 13) * np.uint32(5) + \
            np.uint32(0xe6546b64)
        h ^= np.uint32(4)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85ebca6b)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xc2b2ae35)
        h ^= h >> np.uint32(16)
    return h


def hash_columns(X, bits, seed=0):
    """X (a CSR matrix) with column j moved to hash_index(j) & (2^bits -
    1), as `hogtrain train --hash-bits B` hashes a LIBSVM file's indices:
    a row's entries that land on one column are summed (in scipy's order,
    which may round otherwise than the parser when three or more collide)
    and each row sorted. One copy of the indices and values."""
    X = canonical_csr(X)
    cols = hash_index(np.arange(X.shape[1]), seed) & np.uint32(
        (1 << bits) - 1)
    H = sp.csr_matrix((X.data.copy(), cols[X.indices].astype(np.int64),
                       X.indptr.copy()), shape=(X.shape[0], 1 << bits))
    H.sum_duplicates()
    return H


def _frombuffer(view, dtype):
    return np.frombuffer(view, dtype=dtype)


def load_svmlight(path, zero_based=False, n_features=None, n_jobs=None,
                  hash_bits=0, hash_seed=0, namespaces=False):
    """Reads LIBSVM/SVMlight or Vowpal Wabbit text (plain, gzip, xz or
    zstd, told apart by content) or a .hgb cache with hogtrain's parallel
    parser; returns (X, y): a scipy CSR matrix of float32 values and the
    float32 labels.

    X's values and indices and y are the parser's own arrays, not copies,
    and writable (X.eliminate_zeros(), y[...] = ...): the loader's data
    set is used for nothing else; the row offsets are int32 when they
    fit, as scipy keeps them beside int32 indices (a copy of rows + 1
    numbers). Indices are 1-based as in LIBSVM files (index 1
    is column 0) unless zero_based. n_features: at least this many
    columns. hash_bits B > 0 hashes the features into 2^B columns
    (docs/FORMATS.md, "Hashing"); VW text is always hashed.

    namespaces=True (Vowpal Wabbit text) returns (X, y, ns): ns a string
    of one character per column, the first byte of the namespace of its
    features (' ' for a column no feature has), which the estimators
    take as feature_namespaces for their interactions. Features of two
    namespaces hashed into one column are a ValueError naming the column
    (more hash_bits part them)."""
    path = os.fspath(path)
    if path != "-":
        os.stat(path)  # FileNotFoundError / PermissionError with the path
    # own_arrays: a .hgb file's arrays read, not mapped, so that they may
    # be written (hog_load_opts.own_arrays)
    d = _h.load(path, bool(zero_based), threads(n_jobs),
                int(n_features or 0), int(hash_bits), int(hash_seed),
                own_arrays=True, keep_namespaces=bool(namespaces))
    # before the arrays are handed out to be written
    ns = d.column_namespaces().decode("latin-1") if namespaces \
        else None
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
    return (X, y) if ns is None else (X, y, ns)
