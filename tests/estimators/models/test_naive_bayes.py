"""diffprivlib's GaussianNB drawn with every class's and feature's noise at once, for fits that
are never released (skdptune.estimators.models.FeaturesAtOnceGaussianNB)."""

import numpy as np
import pytest
from diffprivlib.models import GaussianNB
from scipy.stats import ks_2samp

from skdptune import ArrayRange, DPGIBOSearchCV, DPGridSearchCV, DPRandomSearchCV
from skdptune.estimators.models import FeaturesAtOnceGaussianNB, _naive_bayes

#: off-centre bounds: a variance's sensitivity follows its noisy mean
BOUNDS = ([-1.0, 0.0], [3.0, 10.0])


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.uniform(size=n) < 0.3).astype(int)
    X = np.column_stack([rng.normal(0.5 + y, 0.6), rng.uniform(0, 4 + 4 * y)])
    return X, y


def _fitted(cls, seeds, **params):
    X, y = _data()
    out = []
    for seed in seeds:
        model = cls(epsilon=4.0, bounds=BOUNDS, random_state=seed, **params).fit(X, y)
        out.append(np.concatenate([model.theta_.ravel(), model.var_.ravel(),
                                   model.class_count_]))
    return np.array(out)


def _same_distribution(ours, theirs):
    """Every coordinate's two-sample Kolmogorov-Smirnov p-value (the smallest)."""
    return min(ks_2samp(ours[:, j], theirs[:, j]).pvalue for j in range(ours.shape[1]))


def test_the_model_has_diffprivlibs_distribution():
    """Each of the fitted means, variances and counts has the distribution of diffprivlib's
    own fit (300 seeds each, independent streams; the smallest of 10 KS p-values): a twin
    whose variances are sized by the feature's whole width squared, the largest sensitivity
    diffprivlib could pick, is told apart."""
    theirs = _fitted(GaussianNB, range(300))
    ours = _fitted(FeaturesAtOnceGaussianNB, range(1000, 1300))
    assert _same_distribution(ours, theirs) > 1e-3

    original = _naive_bayes.bounded_domain_scales

    def widest(epsilon, sensitivity, lower, upper):
        width = np.subtract(*BOUNDS[::-1]) ** 2
        return original(epsilon, np.broadcast_to(width, np.shape(sensitivity)), lower, upper)

    _naive_bayes.bounded_domain_scales = widest
    try:
        broken = _fitted(FeaturesAtOnceGaussianNB, range(2000, 2300))
    finally:
        _naive_bayes.bounded_domain_scales = original
    assert _same_distribution(broken, theirs) < 1e-8


def test_the_fitted_model_is_diffprivlibs_in_form():
    """The same attributes, shapes and types as diffprivlib's fit, the variances with
    ``var_smoothing`` added, nothing of the drawing left on the model, and it predicts."""
    X, y = _data()
    theirs = GaussianNB(epsilon=1.0, bounds=BOUNDS, var_smoothing=5.0, random_state=0).fit(X, y)
    ours = FeaturesAtOnceGaussianNB(epsilon=1.0, bounds=BOUNDS, var_smoothing=5.0,
                                    random_state=0).fit(X, y)
    assert set(vars(ours)) == set(vars(theirs))
    for name, value in vars(theirs).items():
        assert type(getattr(ours, name)) is type(value), name
        assert np.shape(getattr(ours, name)) == np.shape(value), name
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_array_equal(ours.class_count_, theirs.class_count_)  # drawn first, alike
    assert np.all(ours.var_ >= 5.0) and not np.array_equal(ours.theta_, theirs.theta_)
    np.testing.assert_allclose(ours.class_prior_, ours.class_count_ / len(y))
    assert ours.predict(X).shape == y.shape


@pytest.mark.parametrize("case", ["width 0", "partial_fit", "infinite epsilon"])
def test_settings_outside_the_ordinary_are_diffprivlibs_own_fit(case):
    """A feature of width 0, a ``partial_fit``, or an infinite epsilon: every class is drawn by
    diffprivlib's own code, bit for bit the model diffprivlib fits."""
    X, y = _data()
    bounds = ([-1.0, 4.0], [3.0, 4.0]) if case == "width 0" else BOUNDS
    epsilon = np.inf if case == "infinite epsilon" else 1.0
    models = []
    for cls in (GaussianNB, FeaturesAtOnceGaussianNB):
        model = cls(epsilon=epsilon, bounds=bounds, random_state=3)
        if case == "partial_fit":
            model.partial_fit(X[:20], y[:20], classes=[0, 1]).partial_fit(X[20:], y[20:])
        else:
            model.fit(np.where(X > 4, 4.0, X) if case == "width 0" else X, y)
        models.append(model)
    for name in ("theta_", "var_", "class_count_"):
        np.testing.assert_array_equal(getattr(models[1], name), getattr(models[0], name))


class _Spy:
    """Counts the fits ``FeaturesAtOnceGaussianNB`` draws at once."""

    def __init__(self, monkeypatch):
        self.calls = 0
        original = FeaturesAtOnceGaussianNB._draw_pending

        def counted(model):
            self.calls += 1
            return original(model)

        monkeypatch.setattr(FeaturesAtOnceGaussianNB, "_draw_pending", counted)


@pytest.mark.filterwarnings("ignore")  # error_score="raise", few rows: the configuration's
def test_only_the_partition_fits_use_it(monkeypatch):
    """DPGridSearchCV's partition fits are drawn at once -- none fails (``error_score`` raises)
    -- and the model it returns is diffprivlib's class; the random search's runs and DP-GIBO's
    fits, which are released, are diffprivlib's own fits."""
    X, y = _data(n=400, seed=1)
    spy = _Spy(monkeypatch)
    model = GaussianNB(bounds=BOUNDS)
    grid = DPGridSearchCV(model, {"var_smoothing": [1e-9, 1e-2, 1.0]}, epsilon=2.0,
                          classes=[0, 1], random_state=0, error_score="raise").fit(X, y)
    assert spy.calls >= 3 * grid.n_partitions_
    assert type(grid.best_estimator_) is GaussianNB
    spy.calls = 0
    DPRandomSearchCV(model, {"var_smoothing": [1e-9, 1e-2]}, epsilon=2.0, classes=[0, 1],
                     n_iter=5, random_state=0).fit(X, y)
    box = ArrayRange([[-2.0, -1.0], [2.0, 8.0]], [[-1.0, 0.0], [4.0, 12.0]], as_tuple=True)
    DPGIBOSearchCV(model, {"bounds": box}, epsilon=2.0, classes=[0, 1],
                   random_state=0).fit(X, y)
    assert spy.calls == 0
