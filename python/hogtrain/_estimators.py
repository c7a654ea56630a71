"""scikit-learn estimators over libhogtrain: Classifier and Regressor, and
load() for a model file (docs/PYTHON.md); ClassifierCV, the search of C,
is in _search.py and the parameters' readings in _params.py."""
import warnings

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _hogtrain as _h
from ._data import check_structure
from ._params import _choice
from ._base import (_DENSE_OR_CSR, _LOSS_NAMES, _LOSSES, _MULTICLASS,
                    _PROBABILISTIC, _REGRESSION, _Base, _online)


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
