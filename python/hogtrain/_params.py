"""The estimators' parameters as hog_train_opts fields: each checked
against the library's options' table, and scikit-learn's names for them
(SGDClassifier's) mapped onto hogtrain's (docs/PYTHON.md, "scikit-learn's
names")."""
import numbers

import numpy as np

from . import _hogtrain as _h
from ._data import hash_columns

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
