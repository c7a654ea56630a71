"""What the estimators share (_estimators.py): the loss and algorithm
names, and _Base, the options, training through hogtrain._hogtrain (fit
and partial_fit's trainer), the model's weights as coef_ and intercept_,
pickling and .hgm files."""
import sys
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _hogtrain as _h
from ._data import check_structure, threads
from ._params import Params, _choice, _number, _python_name, _seed

_LOSSES = {
    "logistic": _h.LOSS_LOGISTIC, "log_loss": _h.LOSS_LOGISTIC,
    "hinge": _h.LOSS_HINGE,
    "sqhinge": _h.LOSS_SQHINGE, "squared_hinge": _h.LOSS_SQHINGE,
    "squared": _h.LOSS_SQUARED, "squared_error": _h.LOSS_SQUARED,
    "modified_huber": _h.LOSS_MODIFIED_HUBER, "huber": _h.LOSS_HUBER,
    "epsilon_insensitive": _h.LOSS_EPS_INSENSITIVE,
    "squared_epsilon_insensitive": _h.LOSS_SQ_EPS_INSENSITIVE,
    "quantile": _h.LOSS_QUANTILE, "poisson": _h.LOSS_POISSON,
}
_LOSS_NAMES = {_h.LOSS_LOGISTIC: "logistic", _h.LOSS_HINGE: "hinge",
               _h.LOSS_SQHINGE: "sqhinge", _h.LOSS_SQUARED: "squared",
               _h.LOSS_MODIFIED_HUBER: "modified_huber",
               _h.LOSS_HUBER: "huber",
               _h.LOSS_EPS_INSENSITIVE: "epsilon_insensitive",
               _h.LOSS_SQ_EPS_INSENSITIVE: "squared_epsilon_insensitive",
               _h.LOSS_QUANTILE: "quantile", _h.LOSS_POISSON: "poisson"}
# the regression losses (docs/TRAINING.md, "Losses"); the rest classify
_REGRESSION = (_h.LOSS_SQUARED, _h.LOSS_HUBER, _h.LOSS_EPS_INSENSITIVE,
               _h.LOSS_SQ_EPS_INSENSITIVE, _h.LOSS_QUANTILE,
               _h.LOSS_POISSON)
# the classifiers whose scores give probabilities
_PROBABILISTIC = (_h.LOSS_LOGISTIC, _h.LOSS_MODIFIED_HUBER)
_ALGOS = {"serial": _h.ALGO_SERIAL, "hogwild": _h.ALGO_HOGWILD,
          "cyclades": _h.ALGO_CYCLADES, "scd": _h.ALGO_SCD,
          "dcd": _h.ALGO_DCD, "newton": _h.ALGO_NEWTON,
          "lbfgs": _h.ALGO_LBFGS, "auto": _h.ALGO_AUTO}
# The exact solvers: they stop at tol and report each epoch (an iteration
# of newton's and lbfgs's).
_EXACT = (_h.ALGO_SCD, _h.ALGO_DCD, _h.ALGO_NEWTON, _h.ALGO_LBFGS)
# The exact solvers that take no step size, and where their steps come from
_STEPLESS = {_h.ALGO_NEWTON: ("newton", "trust region"),
             _h.ALGO_LBFGS: ("lbfgs", "line search")}
_MULTICLASS = {"ovr": _h.MULTICLASS_OVR, "softmax": _h.MULTICLASS_SOFTMAX}
# X's values are checked where they are read (hog_data_from_csr: a
# ValueError naming the row and feature of a NaN or an infinity), so
# scikit-learn's own pass over them is not made twice. A sparse X's
# structure is checked before scikit-learn converts it (check_structure):
# its conversions trust the arrays.
# The layout of a pickled estimator (_Base.__getstate__): 1 is
# scikit-learn's attributes beside the model's description
# (Model.describe()) and its float32 weights. A pickle of any other layout
# is refused with a sentence, not guessed at; change the number with the
# layout.
_PICKLE_FORMAT = 1
_DENSE_OR_CSR = dict(accept_sparse="csr", dtype=(np.float32, np.float64),
                     force_all_finite=False)


def _print_epoch(s, epochs):
    parts = [f"epoch {s['epoch']}/{epochs}"]
    if np.isfinite(s["objective"]):
        parts.append(f"objective {s['objective']:.6g}")
    if np.isfinite(s["train_loss"]):
        parts.append(f"train loss {s['train_loss']:.4f}")
    if np.isfinite(s["train_accuracy"]):
        parts.append(f"acc {100 * s['train_accuracy']:.2f}%")
    if np.isfinite(s["train_rmse"]):
        parts.append(f"RMSE {s['train_rmse']:.4g}")
    if not np.isfinite(s["objective"]) and \
            np.isfinite(s["progressive_loss"]):
        parts.append(f"progressive loss {s['progressive_loss']:.4f}")
        if np.isfinite(s["progressive_accuracy"]):
            parts.append(f"acc {100 * s['progressive_accuracy']:.2f}%")
    parts.append(f"{s['rows_per_s'] / 1e6:.2f} M rows/s")
    parts.append(f"{s['seconds']:.2f} s")
    print(": ".join(parts[:2]) + (" | " + " | ".join(parts[2:])
                                  if len(parts) > 2 else ""),
          file=sys.stderr)


def _online(est):
    """partial_fit is the serial SGD trainer's: it keeps the optimizer's
    state from one call to the next (docs/TRAINING.md)."""
    return est.algorithm in (None, "auto", "serial")


class _Base(Params, BaseEstimator):
    """What Classifier and Regressor share: the options, training through
    hogtrain._hogtrain.train, the model's weights as coef_ and intercept_,
    pickling and .hgm files."""

    _default_loss = "logistic"

    # ---- options ---------------------------------------------------------
    def _opts(self, multiclass=None):
        """The options given, as hog_train_opts fields; those left None are
        not passed (the library's defaults, the command's too)."""
        o = {"loss": _choice("loss", self.loss, self._losses)}
        if self.algorithm is not None:
            o["algo"] = _choice("algorithm", self.algorithm, _ALGOS)
        if multiclass is not None:
            o["multiclass"] = multiclass
        schedule = self._schedule()
        eta_name, eta = self._given("eta0", "eta")
        power_name, power = self._given("power_t", "power")
        if o.get("algo") in _STEPLESS:
            given = [n for n, v in (("schedule", schedule), (eta_name, eta),
                                    (power_name, power)) if v is not None]
            if given:
                # the library would ignore them; the command refuses them
                # alike
                name, source = _STEPLESS[o["algo"]]
                raise ValueError(f"{given[0]} applies to the SGD "
                                 f"algorithms; algorithm='{name}' takes no "
                                 f"step size (its steps come from the "
                                 f"{source})")
        if schedule is not None:
            o["schedule"] = schedule
        for name, field, value in ((eta_name, "eta", eta),
                                   (power_name, "power", power),
                                   ("tol", "tol", self.tol)):
            if value is not None:
                o[field] = _number(name, value, _python_name(field))
        epochs = self._epochs()
        if epochs is not None:
            o["epochs"] = epochs
        if self.random_state is not None:
            o["seed"] = _seed(self.random_state)
        if self.normalize:
            o["normalize"] = 1
        if self.save_state:
            o["save_state"] = 1
        if not self.shuffle:
            o["shuffle"] = 0
        average = self._average()
        if average:
            o["average"] = average
        for name in ("epsilon", "quantile_tau"):  # Regressor's
            value = getattr(self, name, None)
            if value is not None:
                o[name] = _number(name, value)
        if not self.fit_intercept:
            o["bias"] = 0.0
        elif self.intercept_scaling is not None:
            o["bias"] = _number("intercept_scaling", self.intercept_scaling)
        self._early(o)
        self._penalty(o)  # last: alpha's default depends on the rest
        # the serial trainer takes no thread count (the library's default,
        # 0, only sizes the metrics' pass)
        n = threads(self.n_jobs)
        if self.n_jobs is not None and \
                _h.resolve(o)["algo"] != _h.ALGO_SERIAL:
            o["threads"] = n
        return o

    # ---- training ----------------------------------------------------------
    def _train(self, X, labels, sample_weight, class_weights=None,
               warm=None, opts=None):
        opts = self._opts() if opts is None else opts
        settled = _h.resolve(opts)
        epochs = settled["epochs"]
        # n_iter_: the epochs run. The SGD trainers run them all; dcd, scd
        # and newton stop at tol and say when through the progress report
        # (their metrics cost nothing before the last epoch; the SGD
        # trainers' would be a pass over the data each epoch, so they get
        # none).
        self.n_iter_ = epochs
        # early stopping: its last report is the epoch it stopped at
        coord = settled["algo"] in _EXACT or settled["early_stop"] > 0

        def progress(st):
            self.n_iter_ = st["epoch"]
            if self.verbose:
                _print_epoch(st, epochs)
        data, bits = self._crossed(X, labels)
        cl = cw = None
        if class_weights is not None:
            cl, cw = class_weights
        chose = {}
        model = _h.train(data, opts, row_weights=sample_weight,
                         class_labels=cl, class_weights=cw, warm_start=warm,
                         progress=progress if self.verbose or coord else None,
                         chose=chose)
        # what trained: the algorithm named, or auto's choice and why (the
        # command's JSON options.auto)
        self.auto_ = chose or None
        self.algorithm_ = chose["algo"] if chose else next(
            k for k, v in _ALGOS.items() if v == settled["algo"])
        return self._with_hashing(model, bits)

    def _crossed(self, X, labels):
        """X and labels for the library, crossed by the interactions asked
        (in 2^bits columns, which the model records) or hashed by
        hash_bits; and those bits (None: neither)."""
        cross = self._interactions()
        bits = (self._cross_bits(X, cross) if cross is not None
                else self._hash_bits())
        return self._data(X, labels, cross, bits), bits

    def _with_hashing(self, model, bits):
        """model saying how its features were hashed (into 2^bits columns;
        None: not), as the command's."""
        if bits is None:
            return model
        spec = model.describe()
        spec["hash_bits"], spec["hash_seed"] = bits, 0
        m = _h.from_weights(spec, np.frombuffer(model.weights(), np.float32))
        m.set_state(model.state())
        return m

    # ---- partial_fit: one run kept between the calls ------------------------
    def _train_piece(self, X, labels, sample_weight, online, warm=None):
        """One unshuffled epoch over the piece X, labels, continuing the run
        of the previous calls: a hogtrain._hogtrain.Trainer (hog_trainer)
        kept between them, made on the first call from the options (and
        warm, the model a fit or an unpickled estimator left). The model
        is made from it only when read (_model, below)."""
        t = self.__dict__.get("_trainer")
        if t is None:
            opts = self._opts()
            opts.update(epochs=1, shuffle=0, save_state=1)
            classes = (np.arange(online, dtype=np.float64) if online >= 3
                       else None)
            t = _h.Trainer(opts, warm_start=warm, classes=classes)
        data, self._trainer_bits = self._crossed(X, labels)
        t.train(data, row_weights=sample_weight)
        self._trainer = t
        self.n_iter_ = 1
        self.algorithm_, self.auto_ = "serial", None  # online: its trainer
        for name in ("_model", "_spec", "_perm", "_coef_made"):
            self.__dict__.pop(name, None)

    def _online_model(self, model):
        return model

    def __getattr__(self, name):
        # after partial_fit the model is the trainer's, made when first
        # read (coef_, predict, pickling) and kept until the next call
        d = self.__dict__
        if name in ("_model", "_spec", "_perm") and "_trainer" in d and \
                "_model" not in d:
            model = d["_trainer"].model(state=True)
            self._set_model(self._online_model(
                self._with_hashing(model, d.get("_trainer_bits"))),
                trainer=True)
            if name in d:
                return d[name]
        raise AttributeError(f"{type(self).__name__!r} object has no "
                             f"attribute {name!r}")

    @staticmethod
    def _weights(sample_weight, X):
        """The sample weights as float64 (None: every row 1), and the rows
        of weight 0 as a mask to drop them (None: none): a row of weight 0
        is a row removed, as scikit-learn means it (hogtrain would keep it
        in n, the row count of the regularization's scale)."""
        if sample_weight is None:
            return None, None
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if not np.all(np.isfinite(sw)) or np.any(sw < 0):
            raise ValueError("sample_weight must be finite numbers >= 0")
        keep = sw != 0
        if keep.all():
            keep = None
        elif not keep.any():
            raise ValueError("every sample_weight is 0: nothing to train on")
        return sw, keep

    @staticmethod
    def _row_weights(sw):
        if sw is None or np.all(sw == 1):
            return None  # the unweighted problem, bit for bit
        return np.ascontiguousarray(sw, dtype=np.float32)

    def _scores(self, X):
        check_is_fitted(self, "_model")
        X = self._validate_data(check_structure(X), reset=False,
                                **_DENSE_OR_CSR)
        data = self._scoring_data(X)
        k = self._spec["n_classes"]
        out = np.empty((X.shape[0], max(k, 1)))
        self._model.scores(data, out)
        return out, data

    def _scoring_data(self, X):
        """X to score, crossed as the model's training rows were (its
        interactions in its 2^hash_bits columns)."""
        return self._data(X, None, self._spec.get("interactions") or None,
                          self._spec["hash_bits"])

    # ---- the model -----------------------------------------------------------
    def _set_model(self, model, trainer=False):
        """model (a hogtrain._hogtrain.Model) becomes the estimator's;
        coef_ and intercept_ are made from its weights when first read
        (a K-class model's are K x features doubles: making them at every
        fit would cost more than some fits). trainer: the model is the
        partial_fit trainer's, which goes on; else (a fit) it is dropped."""
        if not trainer:
            self.__dict__.pop("_trainer", None)
            self.__dict__.pop("_trainer_bits", None)
        spec = model.describe()
        if spec["n_classes"]:
            # row c of the model is the class whose index is its label
            order = np.asarray(spec["classes"], dtype=np.int64)
            self._perm = np.argsort(order)
        self._model, self._spec = model, spec
        self.__dict__.pop("_coef_made", None)

    def _coef_pair(self):
        """(coef_, intercept_), made from the model on first use."""
        made = self.__dict__.get("_coef_made")
        if made is not None:
            return made
        if "_trainer" in self.__dict__:
            self._model  # made from partial_fit's trainer (__getattr__)
        model = self.__dict__.get("_model")
        if model is None:
            raise AttributeError("coef_ is set by fit: this estimator is "
                                 "not fitted yet")
        spec = self._spec
        nf, k, bias = spec["n_features"], spec["n_classes"], spec["bias"]
        per = nf + (bias != 0)
        w = np.frombuffer(model.weights(), np.float32).reshape(max(k, 1), per)
        if k and np.any(self._perm != np.arange(k)):
            w = w[self._perm]  # reordered in float, before the one copy
        coef = w[:, :nf].astype(np.float64)
        icpt = (w[:, nf].astype(np.float64) * bias if bias != 0
                else np.zeros(max(k, 1)))
        made = self._shape_coef(coef, icpt)
        self._coef_made = made
        return made

    def _set_pair(self, i, value):
        made = list(self._coef_pair())
        made[i] = value
        self._coef_made = tuple(made)

    coef_ = property(lambda self: self._coef_pair()[0],
                     lambda self, v: self._set_pair(0, v),
                     doc="The weights, one row per class (K classes).")
    intercept_ = property(lambda self: self._coef_pair()[1],
                          lambda self, v: self._set_pair(1, v),
                          doc="The bias weight times intercept_scaling.")

    def __getstate__(self):
        if "_trainer" in self.__dict__:
            self._model  # the trainer's model, with its state
        state = dict(super().__getstate__())
        state["_hogtrain_pickle"] = _PICKLE_FORMAT
        # the run goes on from the model's state after unpickling (a new
        # trainer warm-started from it takes the same steps)
        state.pop("_trainer", None)
        state.pop("_trainer_bits", None)
        model = state.pop("_model", None)
        state.pop("_spec", None), state.pop("_perm", None)  # the model's
        if model is not None:
            state["_model_state"] = (model.describe(), bytes(model.weights()))
            if model.state() is not None:  # save_state, partial_fit
                state["_opt_state"] = model.state()
        return state

    def __setstate__(self, state):
        state = dict(state)
        name = type(self).__name__
        fmt = state.pop("_hogtrain_pickle", None)
        if fmt != _PICKLE_FORMAT:
            was = ("no hogtrain pickle format (an older hogtrain's)"
                   if fmt is None else f"hogtrain's pickle format {fmt!r}")
            raise ValueError(f"this {name} was pickled in {was}, and this "
                             f"hogtrain ({_h.version}) reads format "
                             f"{_PICKLE_FORMAT} only: fit it again, or move "
                             f"models between versions as .hgm files "
                             f"(save() and hogtrain.load())")
        saved = state.pop("_model_state", None)
        opt = state.pop("_opt_state", None)
        state.pop("_spec", None), state.pop("_perm", None)
        made = state.pop("_coef_made", None)
        super().__setstate__(state)
        if saved is not None:
            spec, w = saved
            m = _h.from_weights(spec, np.frombuffer(w, np.float32))
            if opt is not None:
                m.set_state(opt)  # the optimizer's (save_state)
            self._set_model(m)
            self._check_model()
        if made is not None:
            self._coef_made = made  # coef_ as fitted, or as the caller set it

    def _check_model(self):
        """Refuses (ValueError) a model that does not fit the estimator's
        other attributes, as an altered pickle may hold."""
        nf = self._spec["n_features"]
        if self._spec["hash_bits"]:
            return  # X of any width hashes into the model's 2^B
        if getattr(self, "n_features_in_", nf) != nf:
            raise ValueError(f"the pickled {type(self).__name__} has "
                             f"n_features_in_ {self.n_features_in_} but "
                             f"weights for {nf} features: it is damaged")

    def _file_model(self):
        """The model as a file should hold it (the labels themselves)."""
        return self._model

    def _more_tags(self):
        if self.algorithm in ("newton", "lbfgs"):
            # an exact solver: the shuffled rows change its sums' rounding
            # only, and it passes every check
            return {"requires_y": True}
        return {
            "requires_y": True,
            "_xfail_checks": {
                # Rows of weight 0 are dropped before training, as removed
                # rows; but the check also shuffles the rows that remain,
                # and an SGD model depends on the order it visits rows in
                # (scikit-learn's SGDClassifier fails it alike). Its
                # kind="ones" half is run by python/tests on its own.
                "check_sample_weights_invariance":
                    "SGD's model depends on the rows' order, which the "
                    "check shuffles",
            },
        }

    def save(self, path, format="hgm"):
        """Writes the model as hogtrain's .hgm (format="hgm", what
        `hogtrain predict` and hogtrain.load() read) or as LIBLINEAR's text
        model (format="liblinear", for liblinear-predict); written under a
        temporary name and renamed."""
        check_is_fitted(self, "_model")
        if format not in ("hgm", "liblinear"):
            raise ValueError(f"format must be 'hgm' or 'liblinear' "
                             f"(got {format!r})")
        if format == "liblinear" and self._spec["n_classes"] and \
                self._spec["multiclass"] == _h.MULTICLASS_SOFTMAX:
            # as the command says it (src/cli/train.c)
            warnings.warn("LIBLINEAR has no softmax model, so it is written "
                          "as Crammer-Singer's (MCSVM_CS): liblinear-predict "
                          "gives the same labels but no probabilities (-b 1 "
                          "refuses it; predict_proba gives softmax's)",
                          UserWarning, stacklevel=2)
        self._file_model().save(path, liblinear=format == "liblinear")
