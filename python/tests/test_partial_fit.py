"""partial_fit and save_state (docs/TRAINING.md, "Continuing training"):
the calls over the pieces of a real data set equal one unshuffled epoch of
fit over their concatenation, bit for bit; a fit of 3 epochs kept with its
state and continued for 2 with warm_start equals 5, also through a
pickle."""
import pickle

import numpy as np
import pytest

import hogtrain


def _pieces(est, X, y, size, classes=None):
    for i in range(0, X.shape[0], size):
        if classes is None:
            est.partial_fit(X[i:i + size], y[i:i + size])
        else:
            est.partial_fit(X[i:i + size], y[i:i + size], classes=classes)
    return est


@pytest.mark.parametrize("kw", [{}, {"loss": "hinge"}, {"loss": "sqhinge"},
                                {"schedule": "adagrad", "alpha": 0.0},
                                {"schedule": "constant", "alpha": 0.0}])
def test_partial_fit_pieces_equal_one_unshuffled_epoch(dataset, kw):
    X, y = hogtrain.load_svmlight(dataset("a9a"))
    full = hogtrain.Classifier(epochs=1, shuffle=False, **kw).fit(X, y)
    pf = _pieces(hogtrain.Classifier(**kw), X, y, 10000, np.unique(y))
    assert np.array_equal(full.coef_, pf.coef_), kw
    assert np.array_equal(full.intercept_, pf.intercept_), kw
    # shuffled, the one epoch is another model
    shuffled = hogtrain.Classifier(epochs=1, **kw).fit(X, y)
    assert not np.array_equal(shuffled.coef_, pf.coef_)


def test_partial_fit_of_k_classes_one_vs_rest(dataset):
    X, y = hogtrain.load_svmlight(dataset("news20.train.svm"))
    X, y = X[:3000], y[:3000]
    full = hogtrain.Classifier(epochs=1, shuffle=False).fit(X, y)
    pf = _pieces(hogtrain.Classifier(), X, y, 1000, np.unique(y))
    assert np.array_equal(full.classes_, pf.classes_)
    assert np.array_equal(full.coef_, pf.coef_)
    assert np.array_equal(full.predict(X), pf.predict(X))


def test_partial_fit_of_the_regressor(dataset):
    X, y = hogtrain.load_svmlight(dataset("a9a"))
    full = hogtrain.Regressor(epochs=1, shuffle=False).fit(X, y)
    pf = _pieces(hogtrain.Regressor(), X, y, 10000)
    assert np.array_equal(full.coef_, pf.coef_)


def test_partial_fit_needs_the_classes_first(dataset):
    X, y = hogtrain.load_svmlight(dataset("a9a"))
    with pytest.raises(ValueError, match="classes must be given"):
        hogtrain.Classifier().partial_fit(X[:100], y[:100])


@pytest.mark.parametrize("schedule", ["ftrl", "adagrad", "invscaling"])
def test_save_state_three_then_two_epochs_equal_five(dataset, schedule):
    X, y = hogtrain.load_svmlight(dataset("a9a"))
    five = hogtrain.Classifier(epochs=5, schedule=schedule).fit(X, y)
    three = hogtrain.Classifier(epochs=3, schedule=schedule, save_state=True,
                                warm_start=True).fit(X, y)
    three = pickle.loads(pickle.dumps(three))  # the state travels with it
    three.set_params(epochs=2).fit(X, y)
    assert np.array_equal(five.coef_, three.coef_), schedule


def _sorted_first(X, y):
    """X and y with one row of each class first, in the classes' order,
    then the rest in theirs: a fit's softmax then orders its classes as
    partial_fit's classes do (the scores' sum runs in that order)."""
    _, first = np.unique(y, return_index=True)
    rest = np.setdiff1d(np.arange(len(y)), first)
    order = np.concatenate([first, rest])
    return X[order], y[order]


@pytest.mark.parametrize("kw", [{"schedule": "adagrad", "alpha": 0.0},
                                {"schedule": "constant", "alpha": 0.0}])
def test_partial_fit_of_softmax_equals_one_unshuffled_epoch(dataset, kw):
    X, y = hogtrain.load_svmlight(dataset("news20.train.svm"))
    X, y = _sorted_first(X[:3000], y[:3000])
    full = hogtrain.Classifier(epochs=1, shuffle=False, multiclass="softmax",
                               **kw).fit(X, y)
    pf = _pieces(hogtrain.Classifier(multiclass="softmax", **kw), X, y, 700,
                 np.unique(y))
    assert pf._spec["multiclass"] == hogtrain._hogtrain.MULTICLASS_SOFTMAX
    assert np.array_equal(full.coef_, pf.coef_), kw
    assert np.array_equal(full.intercept_, pf.intercept_), kw
    assert np.array_equal(full.predict_proba(X), pf.predict_proba(X))


@pytest.mark.parametrize("schedule", ["adagrad", "invscaling"])
def test_softmax_save_state_three_then_two_epochs_equal_five(dataset,
                                                             schedule):
    X, y = hogtrain.load_svmlight(dataset("news20.train.svm"))
    X, y = X[:2000], y[:2000]
    kw = dict(multiclass="softmax", schedule=schedule)
    five = hogtrain.Classifier(epochs=5, **kw).fit(X, y)
    three = hogtrain.Classifier(epochs=3, save_state=True, warm_start=True,
                                **kw).fit(X, y)
    three = pickle.loads(pickle.dumps(three))  # the state travels with it
    three.set_params(epochs=2).fit(X, y)
    assert np.array_equal(five.coef_, three.coef_), schedule


@pytest.mark.parametrize("multiclass", ["ovr", "softmax"])
def test_partial_fit_goes_on_after_fit(dataset, multiclass):
    # fit orders K classes as they first appear, partial_fit as classes_
    # sorts them: the fit's model (and its state) is put in partial_fit's
    # order. One unshuffled epoch of fit then a piece equals the two
    # pieces (softmax: its classes first in sorted order, see above).
    X, y = hogtrain.load_svmlight(dataset("news20.train.svm"))
    X, y = X[:2000], y[:2000]
    if multiclass == "softmax":
        X, y = _sorted_first(X, y)
    else:
        _, first = np.unique(y, return_index=True)
        assert np.any(np.diff(y[np.sort(first)]) < 0)  # not sorted
    kw = dict(multiclass=multiclass, schedule="adagrad", alpha=0.0)
    a, b = slice(0, 1200), slice(1200, 2000)
    fitted = hogtrain.Classifier(epochs=1, shuffle=False, save_state=True,
                                 **kw).fit(X[a], y[a])
    fitted.partial_fit(X[b], y[b])
    pieces = hogtrain.Classifier(**kw)
    pieces.partial_fit(X[a], y[a], classes=np.unique(y))
    pieces.partial_fit(X[b], y[b])
    assert np.array_equal(fitted.classes_, pieces.classes_)
    assert np.array_equal(fitted.coef_, pieces.coef_)
    assert np.array_equal(fitted.predict(X), pieces.predict(X))


@pytest.mark.parametrize("kw", [{}, {"schedule": "adagrad"},
                                {"multiclass": "softmax",
                                 "schedule": "adagrad"}])
def test_partial_fit_pickled_mid_stream_goes_on_exactly(dataset, kw):
    # the pickle carries the model with its state; partial_fit after
    # unpickling starts a new trainer from it and takes the same steps
    X, y = hogtrain.load_svmlight(dataset("news20.train.svm"))
    X, y = X[:2100], y[:2100]
    if "multiclass" not in kw:
        y = (y > 10).astype(np.float64)  # binary
    classes = np.unique(y)
    whole = _pieces(hogtrain.Classifier(**kw), X, y, 700, classes)
    first = hogtrain.Classifier(**kw)
    first.partial_fit(X[:700], y[:700], classes=classes)
    later = pickle.loads(pickle.dumps(first))
    for i in (700, 1400):
        later.partial_fit(X[i:i + 700], y[i:i + 700])
    assert np.array_equal(whole.coef_, later.coef_), kw
    assert np.array_equal(whole.intercept_, later.intercept_), kw
    # the pickled one goes on too, untouched by the pickling
    first.partial_fit(X[700:1400], y[700:1400])
    first.partial_fit(X[1400:], y[1400:])
    assert np.array_equal(whole.coef_, first.coef_), kw


def test_partial_fit_makes_the_model_only_when_read(dataset):
    # FTRL, the default: a call steps the trainer's state and nothing
    # else; the model is made when coef_ (or predict, or a pickle) reads
    # it, and kept until the next call
    X, y = hogtrain.load_svmlight(dataset("news20.binary.train.svm"))
    est = hogtrain.Classifier()
    est.partial_fit(X[:100], y[:100], classes=np.unique(y))
    for i in range(100, 3000, 100):
        est.partial_fit(X[i:i + 100], y[i:i + 100])
        assert "_model" not in est.__dict__
    assert est._trainer.pieces == 30
    assert est._trainer.model_passes == 1  # the first call's set-up
    coef = est.coef_
    assert est.__dict__["_model"] is est._model  # made once, then kept
    assert np.array_equal(est.predict(X[:50]),
                          hogtrain.Classifier(epochs=1, shuffle=False)
                          .fit(X[:3000], y[:3000]).predict(X[:50]))
    est.partial_fit(X[3000:3100], y[3000:3100])
    assert "_model" not in est.__dict__
    assert not np.array_equal(coef, est.coef_)
