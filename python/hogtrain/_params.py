"""The estimators' parameters as hog_train_opts fields: each checked
against the library's options' table, and scikit-learn's names for them
(SGDClassifier's) mapped onto hogtrain's (docs/PYTHON.md, "scikit-learn's
names")."""
import numbers

import numpy as np

from . import _hogtrain as _h
from ._data import as_data, hash_columns, hash_index

_SCHEDULES = {"constant": _h.SCHED_CONSTANT,
              "invscaling": _h.SCHED_INVSCALING,
              "adagrad": _h.SCHED_ADAGRAD, "ftrl": _h.SCHED_FTRL}
# scikit-learn's learning rates that hogtrain has not, and what they are
_SKLEARN_ONLY_RATES = {
    "optimal": "scikit-learn's 1/(alpha (t + t0))",
    "adaptive": "scikit-learn's eta0 divided by 5 after n_iter_no_change "
                "epochs without a gain"}
_PENALTIES = {"l2": "l2", "l1": "l1", "elasticnet": "elasticnet"}
# The library's options' table (src/train/options.c) by Python parameter:
# each number's range. A parameter left None is not passed: the library
# settles it (hog_train_opts_resolve) as it does for the command, so both
# train the same model.
_ROWS = {r["python"]: r for r in _h.options() if r["python"]}


def _choice(name, value, table):
    if not isinstance(value, str) or value not in table:
        raise ValueError(f"{name} must be one of "
                         f"{', '.join(repr(k) for k in table)} "
                         f"(got {value!r})")
    return table[value]


def _number(name, value, row=None):
    """value as a float within the range of the table's row for the
    parameter row (None: name; name is what the sentence calls it)."""
    r = _ROWS[row or name]
    lo = None if r["min"] == float("-inf") else r["min"]
    strict = r["above_min"]
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, numbers.Real) or not np.isfinite(value) or (
            lo is not None and (value <= lo if strict else value < lo)):
        bound = "" if lo is None else f" {'>' if strict else '>='} {lo:g}"
        raise ValueError(f"{name} must be a finite number{bound} "
                         f"(got {value!r})")
    return float(value)


def _python_name(field):
    """The Python parameter of the table's row for a hog_train_opts
    field."""
    return next(p for p, r in _ROWS.items() if r["field"] == field)


def _seed(random_state):
    """hogtrain's seed for a random_state given (None is not passed: the
    library's default, so that an unseeded fit is repeatable and equals
    `hogtrain train`'s)."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, (numbers.Integral, np.integer)) and \
            not isinstance(random_state, bool) and random_state >= 0:
        return int(random_state)
    raise ValueError(f"random_state must be None, an integer >= 0 or a "
                     f"numpy RandomState (got {random_state!r})")


class Params:
    """The parameters' readings that every estimator shares: a mixin of
    _Base, reading the attributes its __init__ stores."""

    def _given(self, alias, name):
        """(the parameter's name, its value) of hogtrain's name or of
        scikit-learn's alias for it, whichever was given (name's when
        neither: None); a ValueError naming both when both were."""
        a, v = getattr(self, alias), getattr(self, name)
        if a is not None and v is not None:
            raise ValueError(f"{name} and {alias} are one parameter "
                             f"(hogtrain's name and scikit-learn's); "
                             f"give one")
        return (alias, a) if a is not None else (name, v)

    def _count(self, alias, name, least):
        """The integer given as name or alias (alias == name: a parameter
        without one), at least `least` (None: not given)."""
        name, n = (self._given(alias, name) if alias != name
                   else (name, getattr(self, name)))
        if n is None:
            return None
        if isinstance(n, (bool, np.bool_)) or not isinstance(
                n, numbers.Integral) or n < least:
            raise ValueError(f"{name} must be an integer >= {least} "
                             f"(got {n!r})")
        return int(n)

    def _epochs(self):
        return self._count("max_iter", "epochs", 1)

    def _hash_bits(self):
        """B of hash_bits, or of n_features = 2^B (FeatureHasher's name);
        None: no hashing."""
        bits, n = self.hash_bits, self.n_features
        if bits is not None and n is not None:
            raise ValueError("hash_bits and n_features are one parameter "
                             "(n_features = 2^hash_bits); give one")
        if n is not None:
            if isinstance(n, (bool, np.bool_)) or not isinstance(
                    n, numbers.Integral) or n < 2 or n & (n - 1) or \
                    n > 2**31:
                raise ValueError(f"n_features must be a power of two, 2 to "
                                 f"2^31 (got {n!r})")
            return int(n).bit_length() - 1
        b = self._count("hash_bits", "hash_bits", 1)
        if b is not None and b > 31:
            raise ValueError(f"hash_bits must be 1 to 31 (got {b!r})")
        return b

    def _hashed(self, X):
        """X as the model sees it: its columns hashed into 2^B (hash_bits,
        as the command's --hash-bits B), or X."""
        bits = self._hash_bits()
        return X if bits is None else hash_columns(X, bits)

    def _interactions(self):
        """The interactions asked, in the command's syntax ("ab,abc"):
        interactions (pairs and triples), quadratic (VW's -q: pairs) and
        cubic (VW's --cubic: triples), each a string of terms joined by
        ',' or a list of terms; None for none. The library checks the
        terms (a ValueError naming the bad one)."""
        terms = []
        for name, size in (("interactions", None), ("quadratic", 2),
                           ("cubic", 3)):
            v = getattr(self, name, None)
            if v is None:
                continue
            if isinstance(v, str):
                v = v.split(",") if v else []
            elif not isinstance(v, (list, tuple)) or not all(
                    isinstance(t, str) for t in v):
                raise ValueError(f"{name} must be a string such as 'ab,abc' "
                                 f"or a list of strings (got {v!r})")
            for t in v:
                if any(not 0x20 <= ord(c) < 0x7F or c == "," for c in t):
                    raise ValueError(f"{name}: the term {t!r} names a "
                                     f"namespace that is not one printable "
                                     f"ASCII character other than ','")
                if size and len(t) != size:
                    raise ValueError(f"{name}: the term {t!r} is not "
                                     f"{'a pair' if size == 2 else 'a triple'}"
                                     f" of namespaces (interactions takes "
                                     f"both)")
            terms += v
        return ",".join(terms) or None

    def _namespaces(self, n):
        """feature_namespaces as n namespace bytes (uint8), one per column
        of X: a string of n characters, a sequence of n one-character
        strings, or a dict {namespace: columns} (columns an int, a range,
        a slice or a list of ints; the columns it does not name are in
        VW's default namespace, ' '). None: not given."""
        spec = getattr(self, "feature_namespaces", None)
        if spec is None:
            return None
        name = "feature_namespaces"

        def byte(c, where):
            if not isinstance(c, str) or len(c) != 1 or \
                    not 0x20 <= ord(c) < 0x7F or c == ",":
                raise ValueError(f"{name}: {where} is {c!r}, not one "
                                 f"printable ASCII character other than "
                                 f"',' (a namespace is the first byte of "
                                 f"its name)")
            return ord(c)
        if isinstance(spec, dict):
            out = np.full(n, 0x20, np.uint8)
            owner = {}
            for ns, cols in spec.items():
                b = byte(ns, "a key")
                if isinstance(cols, slice):
                    cols = range(n)[cols]
                elif isinstance(cols, (numbers.Integral, np.integer)):
                    cols = [cols]
                try:
                    cols = np.asarray(list(cols))
                except TypeError:
                    raise ValueError(f"{name}[{ns!r}] must be columns: an "
                                     f"int, a range, a slice or a list of "
                                     f"ints (got {cols!r})") from None
                if cols.size and (not np.issubdtype(cols.dtype, np.integer)
                                  or cols.min() < 0 or cols.max() >= n):
                    raise ValueError(f"{name}[{ns!r}] names columns that X "
                                     f"has not (it has {n}, from 0)")
                for j in cols.tolist():
                    if owner.setdefault(j, ns) != ns:
                        raise ValueError(f"{name}: column {j} is in "
                                         f"namespaces {owner[j]!r} and "
                                         f"{ns!r}")
                out[cols] = b
            return out
        if isinstance(spec, (str, list, tuple, np.ndarray)):
            if len(spec) != n:
                raise ValueError(f"{name} has {len(spec)} namespaces for "
                                 f"X's {n} columns: one per column")
            return np.fromiter((byte(str(c) if isinstance(c, np.str_) else c,
                                     f"column {j}'s")
                                for j, c in enumerate(spec)), np.uint8, n)
        raise ValueError(f"{name} must be a string of one namespace per "
                         f"column, a list of them or a dict {{namespace: "
                         f"columns}} (got {type(spec).__name__})")

    def _cross_bits(self, X, spec):
        """B of the 2^B columns the crossed features are hashed into:
        hash_bits, or X's own width when it is 2^B (columns hashed
        already: load_svmlight's of VW text). spec: the interactions."""
        bits = self._hash_bits()
        if bits is not None:
            return bits
        n = X.shape[1]
        if n >= 2 and n & (n - 1) == 0 and n <= 2**31:
            return n.bit_length() - 1
        raise ValueError(f"interactions {spec!r} hash the crossed features "
                         f"into 2^B columns: give hash_bits (X's {n} columns "
                         f"are not 2^B columns hashed already)")

    def _data(self, X, labels, spec=None, bits=None):
        """A data set of X (hashed by hash_bits) and labels for the
        library, its rows crossed by the interactions spec (fit: those
        asked, in 2^bits columns; predict: the model's) through the
        namespaces of feature_namespaces."""
        data = as_data(self._hashed(X), labels, self.n_jobs)
        if spec is None:
            return data
        ns = self._namespaces(X.shape[1])
        if ns is None:
            raise ValueError(f"interactions {spec!r} cross namespaces: give "
                             f"feature_namespaces (the namespace of each "
                             f"column of X)")
        if self._hash_bits() is not None:
            ns = _hashed_namespaces(ns, self._hash_bits())
        data.set_interactions(ns.tobytes(), spec, bits)
        return data

    def _width(self, X):
        """The model's features for X: 2^B when hashed."""
        bits = self._hash_bits()
        return X.shape[1] if bits is None else 1 << bits

    def _average(self):
        """average as --average N: True 1 (every step), an int N >= 1
        from the N-th step, False or 0 off (scikit-learn's readings)."""
        a = self.average
        if isinstance(a, (bool, np.bool_)):
            return int(a)
        if not isinstance(a, (numbers.Integral, np.integer)) or a < 0:
            raise ValueError(f"average must be True, False or an integer "
                             f">= 0 (got {a!r})")
        return int(a)

    def _schedule(self):
        name, value = self._given("learning_rate", "schedule")
        if value in _SKLEARN_ONLY_RATES and name == "learning_rate":
            raise ValueError(f"learning_rate={value!r} has no hogtrain "
                             f"schedule ({_SKLEARN_ONLY_RATES[value]}): "
                             f"give 'constant', 'invscaling', 'adagrad' or "
                             f"'ftrl'")
        return None if value is None else _choice(name, value, _SCHEDULES)

    def _penalty(self, o):
        """alpha, l1 and C into o, as hogtrain's names give them or as
        scikit-learn's penalty and l1_ratio split alpha: "l2" alpha |w|^2
        / 2, "l1" alpha |w|_1, "elasticnet" l1_ratio of alpha on |w|_1
        and the rest on |w|^2 / 2 (SGDClassifier's objective)."""
        strengths = (("alpha", "l2", self.alpha), ("l1", "l1", self.l1),
                     ("C", "C", self.C))
        for name, field, value in strengths:
            if value is not None:
                o[field] = _number(name, value)
        if self.penalty is None:
            if self.l1_ratio is not None:
                raise ValueError("l1_ratio applies to penalty='elasticnet' "
                                 "only")
            return
        kind = _choice("penalty", self.penalty, _PENALTIES)
        if self.l1 is not None:
            raise ValueError("l1 and penalty both set the L1 strength: give "
                             "l1 with alpha (hogtrain's), or penalty with "
                             "alpha (scikit-learn's)")
        if kind != "elasticnet" and self.l1_ratio is not None:
            raise ValueError("l1_ratio applies to penalty='elasticnet' "
                             "only")
        if "C" in o:
            # LIBLINEAR's C sets the one strength penalty names
            if kind == "elasticnet":
                raise ValueError("C sets one strength: penalty 'l2' or "
                                 "'l1', not 'elasticnet'")
            if kind == "l1":
                o["C_l1"] = 1
            return
        # alpha None: the library's L2 default for these options
        a = o.pop("l2", None)
        if a is None:
            a = _h.resolve(o)["l2"]
        ratio = {"l2": 0.0, "l1": 1.0}.get(kind)
        if ratio is None:
            ratio = 0.15 if self.l1_ratio is None else self.l1_ratio
            if isinstance(ratio, (bool, np.bool_)) or not isinstance(
                    ratio, numbers.Real) or not 0 <= ratio <= 1:
                raise ValueError(f"l1_ratio must be a number in [0, 1] "
                                 f"(got {ratio!r})")
            ratio = float(ratio)
        o["l2"], o["l1"] = (1 - ratio) * a, ratio * a

    def _early(self, o):
        """holdout and early_stop into o (the command's --holdout F
        --early-stop N); early_stopping=True: holdout 0.1 and early_stop
        5 where not given (scikit-learn's validation_fraction and
        n_iter_no_change defaults)."""
        name, f = self._given("validation_fraction", "holdout")
        n = self._count("n_iter_no_change", "early_stop", 1)
        if not self.early_stopping:
            # scikit-learn's two count with early_stopping only (its
            # n_iter_no_change alone watches the training loss, which
            # hogtrain's SGD does not); hogtrain's names count as given
            if self.validation_fraction is not None:
                f = None
            if self.n_iter_no_change is not None:
                n = None
        if self.early_stopping:
            f = 0.1 if f is None else f
            n = 5 if n is None else n
        if n is not None and not f:
            raise ValueError("early_stop watches the validation loss and "
                             "needs a validation set: give holdout (or "
                             "validation_fraction), or early_stopping=True")
        if f is not None:
            o["holdout"] = _number(name, f, "holdout")
        if n is not None:
            o["early_stop"] = n


def _hashed_namespaces(ns, bits):
    """The namespaces of X's columns (ns) as those of its columns hashed
    into 2^bits (hash_columns): a ValueError naming two columns of two
    namespaces that hash into one, which one namespace per column cannot
    say."""
    cols = (hash_index(np.arange(len(ns))) &
            np.uint32((1 << bits) - 1)).astype(np.int64)
    order = np.argsort(cols, kind="stable")
    c, b = cols[order], ns[order]
    clash = np.flatnonzero((c[1:] == c[:-1]) & (b[1:] != b[:-1]))
    if len(clash):
        i, j = order[clash[0]], order[clash[0] + 1]
        raise ValueError(f"columns {i} (namespace {chr(ns[i])!r}) and {j} "
                         f"(namespace {chr(ns[j])!r}) hash into one column "
                         f"({cols[i]}) with hash_bits={bits}: one namespace "
                         f"per column cannot say it; give more hash_bits")
    out = np.full(1 << bits, 0x20, np.uint8)
    out[cols] = ns
    return out
