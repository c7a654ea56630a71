"""Training releases the GIL, and Ctrl-C stops it: KeyboardInterrupt
promptly, and no thread left running."""
import _thread
import os
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

import hogtrain


@pytest.fixture(scope="module")
def big():
    # 100,000 rows of 40 nonzeros: about 40 ms an epoch on one core
    rng = np.random.RandomState(0)
    rows, cols = 100_000, 20_000
    idx = rng.randint(0, cols, (rows, 40))
    X = sp.csr_matrix((rng.rand(rows * 40).astype(np.float32), idx.ravel(),
                       np.arange(0, rows * 40 + 1, 40)), shape=(rows, cols))
    X.sum_duplicates()
    y = (np.asarray(X[:, :10000].sum(axis=1)).ravel() >
         np.asarray(X[:, 10000:].sum(axis=1)).ravel()).astype(np.float32)
    return X, y


def _os_threads():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("algorithm", ["serial", "hogwild"])
def test_ctrl_c_interrupts_training(big, algorithm):
    X, y = big
    python_threads, os_threads = threading.active_count(), _os_threads()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    clf = hogtrain.Classifier(algorithm=algorithm, n_jobs=2, epochs=100_000)
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    took = time.monotonic() - t0
    timer.join()
    assert took < 5, f"KeyboardInterrupt came {took:.1f} s after the start"
    assert not hasattr(clf, "coef_")
    assert threading.active_count() == python_threads
    for _ in range(50):  # the training thread is joined before fit returns
        if _os_threads() == os_threads:
            break
        time.sleep(0.01)
    assert _os_threads() == os_threads, "a thread outlived the training"
    # and the next fit works
    clf.set_params(epochs=1).fit(X, y)


def test_training_releases_the_gil(big):
    X, y = big
    ticks = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        hogtrain.Classifier(epochs=10, n_jobs=1).fit(X, y)
    finally:
        done.set()
        t.join()
    assert ticks[0] > 20, "another Python thread did not run during fit"


def test_an_exception_in_the_progress_callback_stops_training(big,
                                                               monkeypatch):
    X, y = big
    from hogtrain import _base

    def boom(s, epochs):
        raise RuntimeError("stop here")
    monkeypatch.setattr(_base, "_print_epoch", boom)
    with pytest.raises(RuntimeError, match="stop here"):
        hogtrain.Classifier(epochs=100_000, verbose=1).fit(X, y)
