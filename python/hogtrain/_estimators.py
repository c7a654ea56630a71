"""scikit-learn estimators over libhogtrain: Classifier and Regressor, and
load() for a model file (docs/PYTHON.md); ClassifierCV, the search of C,
is in _search.py and the parameters' readings in _params.py."""
import sys
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
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


class Classifier(ClassifierMixin, _Base):
    """A linear classifier trained by hogtrain: logistic regression
    (loss="logistic"), a linear SVM ("hinge") or the squared hinge
    ("sqhinge"), minimising

        (1/n) sum_i v_i loss(y_i, w.x_i + b) + alpha/2 |w|^2 + l1 |w|_1

    (docs/TRAINING.md), with v_i = sample_weight[i] * class_weight[y_i].

    Parameters
    ----------
    loss : "logistic" (default; "log_loss"), "hinge", "sqhinge"
        ("squared_hinge").
    alpha : float or None. The L2 strength (the command's --l2; None: its
        default, 4e-6 under FTRL, 1e-5 under the other schedules).
    l1 : float, default 0. The L1 strength (--l1).
    C : float or None. LIBLINEAR's C: when set, alpha = 1/(C n) for the n
        training rows and l1 = 0 (--C).
    algorithm : "auto" (default: the command's --algo auto, chosen at fit
        from the data and n_jobs: Hogwild! with a model per thread under
        FTRL where the data has two labels or a regression target and at
        least 16.8M nonzeros, else the serial trainer; docs/TRAINING.md),
        "serial" (the deterministic reference SGD, the same model at any
        n_jobs),
        "hogwild" (lock-free threads), "cyclades" (parallel, the same model
        at every thread count), "dcd" (dual coordinate descent, LIBLINEAR's
        solvers), "scd" (primal coordinate descent; L1), "newton"
        (trust-region Newton, LIBLINEAR's -s 0 and -s 2: logistic, sqhinge
        or squared loss with alpha > 0 or C, no l1, no schedule or eta, no
        warm start; the same model at every n_jobs), "lbfgs" (L-BFGS on
        the same losses, and OWL-QN when l1 > 0: LIBLINEAR -s 6's problem
        with l1 = 1/(C n); no schedule or eta, no warm start; the same
        model at every n_jobs).
    n_jobs : int or None. Threads: None or -1 all cores.
    epochs : int or None. Passes over the data (None: 5 for the SGD
        algorithms, 1000 for dcd, scd, newton and lbfgs, which stop at
        tol; newton's and lbfgs's epoch is one iteration).
    max_iter : int or None. scikit-learn's name for epochs (give one).
    n_iter_ : after fit, the epochs run (dcd, scd, newton and lbfgs: until
        tol; one-vs-rest reports its classes' cap).
    algorithm_, auto_ : after fit, the algorithm that trained ("serial",
        "hogwild", ...), and with algorithm "auto" a dict of what it chose
        and why (algo, replicas, threads, why: the command's JSON
        options.auto; None when an algorithm was named).
    schedule : None, "ftrl", "adagrad", "invscaling" or "constant". None
        (default): the command's, "ftrl" (FTRL-Proximal) with algorithm
        "serial" or "hogwild" and multiclass "ovr", "adagrad" elsewhere
        (docs/TRAINING.md, "The default"). SGDClassifier's
        own method is schedule="invscaling" with eta=alpha ** -0.25 and
        intercept_scaling=0.1 (docs/TRAINING.md).
    eta : float or None. The initial step (None: 0.3 logistic, 0.1 hinge).
    multiclass : None ("ovr", the library's), "ovr" or "softmax", for
        three classes or more.
    class_weight : None, "balanced" or a dict {label: weight}.
    random_state : int, RandomState or None. The seed of the row order
        (None: 1, the command's default, so that fits repeat).
    tol : float or None. dcd's, scd's, newton's and lbfgs's stopping rule
        (LIBLINEAR's -e; None: its defaults, 0.1 for dcd, 0.01 for scd,
        newton and lbfgs).
    verbose : int. > 0 prints each epoch's metrics to standard error.
    warm_start : bool. Start from the previous fit's weights.
    fit_intercept : bool, default True. A bias feature of value
        intercept_scaling (LIBLINEAR's -B) whose weight is regularized.
    intercept_scaling : float or None. The bias feature's value (None:
        the library's, 1).
    normalize : bool. Max-abs scaling of the features, folded into coef_.
    save_state : bool. Keep the optimizer's state in the model (FTRL's and
        AdaGrad's sums, the epochs and steps; pickled and saved with it),
        so that a fit with warm_start continues the run exactly: 3 epochs
        then 2 equal 5 (the serial algorithm, one-vs-rest or softmax;
        docs/TRAINING.md, "Continuing training").
    shuffle : bool, default True. False visits the rows in their order
        every epoch (scikit-learn's shuffle=False).
    power : float or None. invscaling's exponent (None: 0.5; --power).
    average : bool or int, default False. Averaged SGD (scikit-learn's
        average, --average N): coef_ is the mean of the weights after each
        step (True), or after each from the N-th on (an int N >= 1);
        schedule 'constant' or 'invscaling' (None: invscaling), the serial
        and hogwild algorithms, not with save_state or partial_fit
        (docs/TRAINING.md, "Averaged SGD").
    holdout, early_stop : float, int or None. A seeded, stratified share
        of the rows kept out as a validation set, and the epochs without
        a lower validation loss after which training stops, the model the
        best epoch's (--holdout F --early-stop N).
    hash_bits, n_features : int or None. Hash X's columns into 2^B
        (n_features = 2^B; give one), as the command's --hash-bits B:
        coef_ has 2^B columns.
    feature_namespaces : None, a string of one namespace character per
        column of X, a list of them, or a dict {namespace: columns} (an
        int, range, slice or list of column numbers; columns it does not
        name are in VW's default namespace ' '). What interactions cross;
        load_svmlight(..., namespaces=True) gives it for VW text.
    interactions, quadratic, cubic : None, a string of terms joined by
        ',' or a list of terms. The command's --interactions ab,abc
        (pairs and triples of namespaces), VW's -q ab (pairs) and
        --cubic abc (triples); all given are crossed. The crossed
        features are hashed into 2^hash_bits columns, or into X's own
        columns when X has 2^B of them (hashed already). The model file
        records the interactions; predict crosses X alike
        (docs/PYTHON.md, "Interactions").
    penalty, l1_ratio, learning_rate, eta0, power_t, early_stopping,
        validation_fraction, n_iter_no_change : scikit-learn's names
        (SGDClassifier's) for the parameters above, each the same model
        as the name it maps onto; given with that name, a ValueError
        (docs/PYTHON.md, "scikit-learn's names"). penalty None is
        hogtrain's alpha and l1, not scikit-learn's "no penalty".

    partial_fit(X, y, classes=None, sample_weight=None) trains one
    unshuffled epoch over X, continuing the state of the previous call:
    calls over the pieces of a data set equal one epoch of fit with
    shuffle=False over their concatenation, bit for bit under FTRL (the
    default), up to rounding where other schedules regularize lazily;
    K classes one-vs-rest or softmax. classes (every label there will be)
    is needed on the first call.

    Labels may be any values numpy can sort (numbers, strings); classes_
    is np.unique(y), and coef_ has one row per class in that order (one
    row for two classes: the score of classes_[1]).
    """

    _losses = {k: v for k, v in _LOSSES.items() if v not in _REGRESSION}

    def __init__(self, loss="logistic", *, alpha=None, l1=None, C=None,
                 algorithm=None, n_jobs=None, epochs=None, max_iter=None,
                 schedule=None, eta=None, multiclass=None,
                 class_weight=None, random_state=None, tol=None, verbose=0,
                 warm_start=False, fit_intercept=True, intercept_scaling=None,
                 normalize=False, save_state=False, shuffle=True,
                 power=None, holdout=None, early_stop=None, penalty=None,
                 l1_ratio=None, learning_rate=None, eta0=None, power_t=None,
                 early_stopping=False, validation_fraction=None,
                 n_iter_no_change=None, hash_bits=None, n_features=None,
                 average=False, feature_namespaces=None, interactions=None,
                 quadratic=None, cubic=None):
        self.loss = loss
        self.alpha = alpha
        self.l1 = l1
        self.C = C
        self.algorithm = algorithm
        self.n_jobs = n_jobs
        self.epochs = epochs
        self.max_iter = max_iter
        self.schedule = schedule
        self.eta = eta
        self.multiclass = multiclass
        self.class_weight = class_weight
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.normalize = normalize
        self.save_state = save_state
        self.shuffle = shuffle
        self.power = power
        self.holdout = holdout
        self.early_stop = early_stop
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.hash_bits = hash_bits
        self.n_features = n_features
        self.average = average
        self.feature_namespaces = feature_namespaces
        self.interactions = interactions
        self.quadratic = quadratic
        self.cubic = cubic

    def _opts(self):
        return super()._opts(None if self.multiclass is None else
                             _choice("multiclass", self.multiclass,
                                     _MULTICLASS))

    def fit(self, X, y, sample_weight=None):
        """Trains on X (a scipy sparse matrix or a 2-D array; CSR float32
        with int32 indices is used without a copy) and the labels y."""
        X, y = self._validate_data(check_structure(X), y, **_DENSE_OR_CSR)
        check_classification_targets(y)
        classes, y_enc = np.unique(y, return_inverse=True)
        name = type(self).__name__
        if len(classes) < 2:
            raise ValueError(f"{name} needs samples of at least 2 classes "
                             f"in the data, but the data contains only one "
                             f"class: {classes[0]!r}")
        warm = None
        if self.warm_start and hasattr(self, "_model"):
            if not np.array_equal(classes, self.classes_):
                raise ValueError("warm_start: the labels' classes are not "
                                 "those of the previous fit")
            if self._width(X) != self._spec["n_features"]:
                raise ValueError(f"warm_start: X has {self._width(X)} "
                                 f"features, the previous fit "
                                 f"{self._spec['n_features']}")
            warm = self._model
        cw = None
        if self.class_weight is not None:
            weights = compute_class_weight(self.class_weight,
                                           classes=classes, y=y)
            if np.any(weights != 1):
                cw = weights
        sw, keep = self._weights(sample_weight, X)
        if keep is not None:
            X, y_enc, sw = X[keep], y_enc[keep], sw[keep]
            left = np.unique(y_enc)
            if len(left) < len(classes):
                if len(left) < 2:
                    raise ValueError(
                        f"{name} needs samples of at least 2 classes with a "
                        f"sample_weight above 0, but they are in one class "
                        f"only: {classes[left[0]]!r}")
                raise ValueError(
                    f"sample_weight is 0 on every sample of the classes "
                    f"{list(classes[np.setdiff1d(np.arange(len(classes)), left)])}: "
                    f"every class needs a sample of weight above 0")
        if warm is not None and self._spec["n_classes"]:
            warm = _classes_in_order(warm, y_enc)
        class_weights = None
        if cw is not None:
            class_weights = (np.arange(len(classes), dtype=np.float64),
                             np.ascontiguousarray(cw, dtype=np.float64))
        model = self._train(X, y_enc.astype(np.float32), self._row_weights(sw),
                            class_weights, warm)
        self.classes_ = classes
        self._set_model(model)
        return self

    @available_if(_online)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One unshuffled epoch over X and y, continuing the state of the
        previous partial_fit (or of a fit with save_state): the calls over
        the pieces of a data set equal one epoch of fit(shuffle=False)
        over their concatenation. classes: every label the calls will
        see, needed on the first call (as scikit-learn's)."""
        # after fit, partial_fit goes on from its model and classes_
        first = "_model" not in self.__dict__ and \
            "_trainer" not in self.__dict__
        if first and classes is None:
            raise ValueError("classes must be given on the first call to "
                             "partial_fit (every label there will be)")
        X, y = self._validate_data(check_structure(X), y, reset=first,
                                   **_DENSE_OR_CSR)
        check_classification_targets(y)
        if first:
            self.classes_ = np.unique(classes)
            if len(self.classes_) < 2:
                raise ValueError("classes must hold at least 2 labels")
        elif classes is not None and not np.array_equal(
                np.unique(classes), self.classes_):
            raise ValueError("classes differ from those of the first call "
                             "to partial_fit")
        y_enc = np.searchsorted(self.classes_, y)
        bad = (y_enc >= len(self.classes_)) | \
            (self.classes_[np.minimum(y_enc, len(self.classes_) - 1)] != y)
        if np.any(bad):
            raise ValueError(f"y holds labels not in classes: "
                             f"{np.unique(np.asarray(y)[bad])[:5]!r}")
        sw, keep = self._weights(sample_weight, X)
        if keep is not None:
            X, y_enc, sw = X[keep], y_enc[keep], sw[keep]
        k = len(self.classes_)
        if k == 2 and len(np.unique(y_enc)) < 2:
            raise ValueError("partial_fit of two classes needs both in each "
                             "piece (the library's binary problem reads its "
                             "labels from the rows)")
        warm = None
        if not first and "_trainer" not in self.__dict__:
            # a fit's classes come in their first appearance's order;
            # partial_fit's K >= 3 in classes_' order
            warm = (self._model if k == 2 else
                    _classes_as(self._model, np.arange(k)))
        self._train_piece(X, y_enc.astype(np.float32), self._row_weights(sw),
                          k, warm)
        self._partial = True
        return self

    @staticmethod
    def _shape_coef(coef, icpt):
        return coef, icpt

    def _check_model(self):
        super()._check_model()
        spec, name = self._spec, type(self).__name__
        k = spec["n_classes"]
        classes = getattr(self, "classes_", None)
        if spec["regression"] or classes is None or len(classes) != (k or 2):
            has = ("no classes_" if classes is None
                   else f"{len(classes)} classes in classes_")
            model = ("a regression model" if spec["regression"]
                     else f"weights for {k or 2} classes")
            raise ValueError(f"the pickled {name} has {has} but {model}: "
                             f"it is damaged")
        # the model's classes are classes_' places (fit encodes them so)
        coded = (sorted(spec["classes"]) == list(range(k)) if k else
                 (spec["label_pos"], spec["label_neg"]) == (1.0, 0.0))
        if not coded:
            raise ValueError(f"the pickled {name}'s model does not label "
                             f"its classes by their places in classes_: it "
                             f"is damaged")

    def decision_function(self, X):
        """w.x + b per row: (n,) for two classes (the score of
        classes_[1]), (n, K) for K classes in classes_ order."""
        out, _ = self._scores(X)
        if self._spec["n_classes"]:
            return out[:, self._perm]
        return out.ravel()

    def predict(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def _is_logistic(self):
        return _LOSSES.get(self.loss) in _PROBABILISTIC

    @available_if(_is_logistic)
    def predict_proba(self, X):
        """Class probabilities (logistic and modified Huber models),
        columns in classes_ order: sigma(score) for two classes, softmax
        for a softmax model, one-vs-rest sigma(s_c) / sum sigma
        (LIBLINEAR's -b 1); modified Huber: (clip(score, -1, 1) + 1) / 2,
        K classes' normalised, as scikit-learn's."""
        check_is_fitted(self, "_model")
        X = self._validate_data(check_structure(X), reset=False,
                                **_DENSE_OR_CSR)
        data = self._scoring_data(X)
        k = self._spec["n_classes"]
        out = np.empty((X.shape[0], k or 2))
        self._model.probabilities(data, out)
        return out[:, self._perm] if k else out[:, ::-1].copy()

    @available_if(_is_logistic)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def _file_model(self):
        if not np.issubdtype(self.classes_.dtype, np.number) or \
                np.issubdtype(self.classes_.dtype, np.complexfloating):
            warnings.warn("the classes are not numbers: the model file "
                          "labels them 0..K-1, their places in classes_",
                          UserWarning, stacklevel=3)
            return self._model
        spec = dict(self._spec)
        labels = self.classes_.astype(np.float64)
        if spec["n_classes"]:
            spec["classes"] = [float(labels[int(c)]) for c in spec["classes"]]
        else:
            spec["label_pos"], spec["label_neg"] = (float(labels[1]),
                                                    float(labels[0]))
        return _h.from_weights(spec, np.frombuffer(self._model.weights(),
                                                   np.float32))


class Regressor(RegressorMixin, _Base):
    """Least squares (loss="squared"), ridge through alpha and the Lasso
    through l1, trained by hogtrain: minimises

        (1/n) sum_i v_i (w.x_i + b - y_i)^2 / 2 + alpha/2 |w|^2 + l1 |w|_1

    with v_i = sample_weight[i]. The parameters are Classifier's (without
    multiclass and class_weight); loss is "squared" ("squared_error"), or
    "huber", "epsilon_insensitive", "squared_epsilon_insensitive" (with
    epsilon, default 0.1, as scikit-learn's SGDRegressor), "quantile"
    (with quantile_tau, default 0.5) or "poisson" (predicting
    exp(w.x + b)); docs/TRAINING.md, "Losses".
    algorithm="newton" solves ridge (alpha > 0 or C, l1 0) to tol,
    LIBLINEAR's -s 11; algorithm="scd" the Lasso; algorithm="lbfgs" both
    (OWL-QN when l1 > 0)."""

    _losses = {k: v for k, v in _LOSSES.items() if v in _REGRESSION}

    def __init__(self, loss="squared", *, alpha=None, l1=None, C=None,
                 algorithm=None, n_jobs=None, epochs=None, max_iter=None,
                 schedule=None, eta=None, random_state=None, tol=None,
                 verbose=0, warm_start=False, fit_intercept=True,
                 intercept_scaling=None, normalize=False, save_state=False,
                 shuffle=True, power=None, holdout=None, early_stop=None,
                 penalty=None, l1_ratio=None, learning_rate=None, eta0=None,
                 power_t=None, early_stopping=False,
                 validation_fraction=None, n_iter_no_change=None,
                 hash_bits=None, n_features=None, average=False,
                 epsilon=None, quantile_tau=None, feature_namespaces=None,
                 interactions=None, quadratic=None, cubic=None):
        self.loss = loss
        self.epsilon = epsilon
        self.quantile_tau = quantile_tau
        self.alpha = alpha
        self.l1 = l1
        self.C = C
        self.algorithm = algorithm
        self.n_jobs = n_jobs
        self.epochs = epochs
        self.max_iter = max_iter
        self.schedule = schedule
        self.eta = eta
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.normalize = normalize
        self.save_state = save_state
        self.shuffle = shuffle
        self.power = power
        self.holdout = holdout
        self.early_stop = early_stop
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.hash_bits = hash_bits
        self.n_features = n_features
        self.average = average
        self.feature_namespaces = feature_namespaces
        self.interactions = interactions
        self.quadratic = quadratic
        self.cubic = cubic

    def fit(self, X, y, sample_weight=None):
        """Trains on X (a scipy sparse matrix or a 2-D array) and the real
        targets y."""
        X, y = self._validate_data(check_structure(X), y, y_numeric=True,
                                   **_DENSE_OR_CSR)
        warm = None
        if self.warm_start and hasattr(self, "_model"):
            if self._width(X) != self._spec["n_features"]:
                raise ValueError(f"warm_start: X has {self._width(X)} "
                                 f"features, the previous fit "
                                 f"{self._spec['n_features']}")
            warm = self._model
        y = np.asarray(y, dtype=np.float32)
        if not np.all(np.isfinite(y)):
            raise ValueError("y holds a value that is not a finite number "
                             "in single precision")
        sw, keep = self._weights(sample_weight, X)
        if keep is not None:
            X, y, sw = X[keep], y[keep], sw[keep]
        model = self._train(X, y, self._row_weights(sw), warm=warm)
        self._set_model(_as_regression(model))
        return self

    @available_if(_online)
    def partial_fit(self, X, y, sample_weight=None):
        """One unshuffled epoch over X and y, continuing the state of the
        previous partial_fit: the calls over the pieces of a data set
        equal one epoch of fit(shuffle=False) over their concatenation."""
        first = getattr(self, "_partial", None) is None
        X, y = self._validate_data(check_structure(X), y, y_numeric=True,
                                   reset=first, **_DENSE_OR_CSR)
        y = np.asarray(y, dtype=np.float32)
        if not np.all(np.isfinite(y)):
            raise ValueError("y holds a value that is not a finite number "
                             "in single precision")
        sw, keep = self._weights(sample_weight, X)
        if keep is not None:
            X, y, sw = X[keep], y[keep], sw[keep]
        warm = None
        if not first and "_trainer" not in self.__dict__:
            warm = self._model
        self._train_piece(X, y, self._row_weights(sw), 0, warm)
        self._partial = True
        return self

    def _online_model(self, model):
        return _as_regression(model)

    @staticmethod
    def _shape_coef(coef, icpt):
        return coef[0], float(icpt[0])

    def _check_model(self):
        super()._check_model()
        if not self._spec["regression"]:
            raise ValueError("the pickled Regressor holds a classification "
                             "model: it is damaged")

    def predict(self, X):
        """w.x + b per row; exp(w.x + b) under the Poisson loss (its
        log link)."""
        out, _ = self._scores(X)
        if self._spec["loss"] == _h.LOSS_POISSON:
            return np.exp(out.ravel())
        return out.ravel()


def _classes_in_order(model, y_enc):
    """model (K classes labelled 0..K-1) with its class vectors in the
    order of the labels' first appearance in y_enc: the order the library
    gives the classes of that training, which a warm start must match."""
    labels, first = np.unique(y_enc, return_index=True)
    return _classes_as(model, labels[np.argsort(first)])


def _classes_as(model, order):
    """model (K classes labelled 0..K-1) with its class vectors, and its
    optimizer state's (laid out as the weights), in the order of the labels
    `order`."""
    order = np.asarray(order, dtype=np.int64)
    spec = model.describe()
    if list(np.asarray(spec["classes"], dtype=np.int64)) == list(order):
        return model
    per = spec["n_features"] + (spec["bias"] != 0)
    row = {int(c): i for i, c in enumerate(spec["classes"])}
    rows = [row[int(c)] for c in order]

    def ordered(buf):
        a = np.frombuffer(buf, np.float32).reshape(-1, per)
        return np.ascontiguousarray(a[rows]).ravel()
    spec["classes"] = [float(c) for c in order]
    m = _h.from_weights(spec, ordered(model.weights()))
    state = model.state()
    if state is not None:
        sch, epochs, steps, a, b = state
        m.set_state((sch, epochs, steps,
                     None if a is None else ordered(a).tobytes(),
                     None if b is None else ordered(b).tobytes()))
    return m


def _as_regression(model):
    """The model marked as a regression (hogtrain marks a squared-loss
    model of two target values as binary, to predict those labels)."""
    spec = model.describe()
    if spec["regression"]:
        return model
    spec["regression"] = True
    m = _h.from_weights(spec, np.frombuffer(model.weights(), np.float32))
    m.set_state(model.state())
    return m


def load(path):
    """A fitted Classifier or Regressor from a model file (.hgm, or a
    LIBLINEAR model), as `hogtrain predict` reads it."""
    import os
    os.stat(path)  # FileNotFoundError with the path
    m = _h.load_model(os.fspath(path))
    spec = m.describe()
    loss = _LOSS_NAMES[spec["loss"]]
    bias = spec["bias"]
    kw = dict(alpha=spec["l2"], l1=spec["l1"], fit_intercept=bias != 0,
              intercept_scaling=bias if bias != 0 else 1.0,
              interactions=spec.get("interactions") or None)
    w = np.frombuffer(m.weights(), np.float32)
    if spec["regression"]:
        if spec["loss"] == _h.LOSS_QUANTILE:
            kw["quantile_tau"] = spec["loss_param"]
        elif spec["loss"] in (_h.LOSS_HUBER, _h.LOSS_EPS_INSENSITIVE,
                              _h.LOSS_SQ_EPS_INSENSITIVE):
            kw["epsilon"] = spec["loss_param"]
        est = Regressor(loss, **kw)
    else:
        est = Classifier(loss, multiclass="softmax"
                         if spec["multiclass"] == _h.MULTICLASS_SOFTMAX
                         else "ovr", **kw)
        enc = dict(spec)
        if spec["n_classes"]:
            labels = np.asarray(spec["classes"], dtype=np.float64)
            est.classes_ = np.sort(labels)
            enc["classes"] = [float(i) for i in
                              np.searchsorted(est.classes_, labels)]
        else:
            pos, neg = spec["label_pos"], spec["label_neg"]
            est.classes_ = np.array(sorted([pos, neg]), dtype=np.float64)
            if pos < neg:  # the score of the larger label is -score
                w = -w
            enc["label_pos"], enc["label_neg"] = 1.0, 0.0
        m = _h.from_weights(enc, np.ascontiguousarray(w, dtype=np.float32))
    est.n_features_in_ = spec["n_features"]
    est._set_model(m)
    return est
