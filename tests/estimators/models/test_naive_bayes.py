"""diffprivlib's GaussianNB drawn with every class's and feature's noise at once, for fits that
are never released (skdptune.estimators.models.FeaturesAtOnceGaussianNB)."""

import numpy as np
import pytest
from diffprivlib.mechanisms import LaplaceTruncated
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


def test_the_means_are_diffprivlibs_mechanisms_on_the_noisy_counts():
    """Seeded, the generator is read as diffprivlib reads it up to the counts; then every
    class's (in label order) and feature's noisy mean is diffprivlib's ``LaplaceTruncated`` at
    ``epsilon / (3 d)`` on the class's sum, its domain the bounds times the class's *noisy*
    count, divided by that count, drawn in turn from the same generator -- for three string
    labels. A twin dividing by the true count, or drawing feature by feature across the
    classes, differs."""
    rng = np.random.default_rng(4)
    X = np.clip(rng.normal(1.0, 2.0, (60, 2)), *BOUNDS)
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, 60)]
    model = FeaturesAtOnceGaussianNB(epsilon=1.0, bounds=BOUNDS, random_state=8).fit(X, y)
    generator = np.random.RandomState(8)
    counts = GaussianNB(epsilon=1.0, bounds=BOUNDS)._noisy_class_counts(y, generator)
    np.testing.assert_array_equal(model.class_count_, counts)
    lower, upper = (np.array(b) for b in BOUNDS)
    expected = [[LaplaceTruncated(epsilon=1.0 / 3 / 2, delta=0, sensitivity=upper[j] - lower[j],
                                  lower=lower[j] * n, upper=upper[j] * n,
                                  random_state=generator).randomise(X[y == label, j].sum()) / n
                 for j in range(2)]
                for label, n in zip(["a", "b", "c"], counts, strict=True)]
    np.testing.assert_allclose(model.theta_, expected, rtol=1e-12)


def test_the_variances_are_sized_by_the_noisy_means_and_counts(monkeypatch):
    """The variances' mechanisms: sensitivity ``max(mean - lower, upper - mean)^2`` of the
    class's *noisy* mean (the fitted ``theta_``), domain ``[0, sensitivity n]`` with the noisy
    count ``n``, epsilon ``epsilon / (3 d)``, and the value drawn the squared deviations from
    the noisy mean; the fitted variance is the draw over ``n`` plus ``var_smoothing``."""
    seen = {}
    scales, draws = _naive_bayes.bounded_domain_scales, _naive_bayes.bounded_domain_draws

    def scales_seen(*args):
        seen["scales"] = args
        return scales(*args)

    def draws_seen(*args):
        seen["draws"] = args
        seen["drawn"] = draws(*args)
        return seen["drawn"]

    monkeypatch.setattr(_naive_bayes, "bounded_domain_scales", scales_seen)
    monkeypatch.setattr(_naive_bayes, "bounded_domain_draws", draws_seen)
    X, y = _data()
    model = FeaturesAtOnceGaussianNB(epsilon=2.0, bounds=BOUNDS, var_smoothing=0.25,
                                     random_state=1).fit(X, y)
    lower, upper = (np.array(b) for b in BOUNDS)
    n = model.class_count_[:, None]
    sensitivity = np.maximum(model.theta_ - lower, upper - model.theta_) ** 2
    epsilon, got_sensitivity, _, got_upper = seen["scales"]
    assert epsilon == 2.0 / 3 / 2
    np.testing.assert_array_equal(got_sensitivity, sensitivity)
    np.testing.assert_array_equal(got_upper, sensitivity * n)
    deviations = [((X[y == label] - mean) ** 2).sum(axis=0)
                  for label, mean in zip(model.classes_, model.theta_, strict=True)]
    np.testing.assert_allclose(seen["draws"][0], deviations, rtol=1e-12)
    np.testing.assert_array_equal(seen["draws"][3], sensitivity * n)
    np.testing.assert_array_equal(model.var_, seen["drawn"] / n + 0.25)


def test_unseeded_draws_are_secure_and_seeded_ones_reproducible():
    """Unseeded, numpy's global generator is neither read nor advanced (diffprivlib's
    mechanisms draw from its secure generator then, and so does this fit): reseeding it gives
    no two equal models. Seeded, the same seed gives the same model."""
    X, y = _data()
    state = np.random.get_state()  # noqa: NPY002 (the global generator is the subject)
    thetas = set()
    for _ in range(3):
        np.random.seed(0)  # noqa: NPY002
        model = FeaturesAtOnceGaussianNB(epsilon=1.0, bounds=BOUNDS).fit(X, y)
        thetas.add(model.theta_.tobytes())
        # left untouched
        assert np.random.random() == np.random.RandomState(0).random()  # noqa: NPY002
    np.random.set_state(state)  # noqa: NPY002
    assert len(thetas) == 3
    twice = [FeaturesAtOnceGaussianNB(epsilon=1.0, bounds=BOUNDS, random_state=6).fit(X, y)
             for _ in range(2)]
    np.testing.assert_array_equal(twice[0].theta_, twice[1].theta_)
    np.testing.assert_array_equal(twice[0].var_, twice[1].var_)


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


@pytest.mark.parametrize("case", ["width 0", "partial_fit", "infinite epsilon",
                                  "width near underflow"])
def test_settings_outside_the_ordinary_are_diffprivlibs_own_fit(case):
    """A feature of width 0 or so narrow that a variance's sensitivity would underflow to 0 (the
    lockstep bisection would find no scale), a ``partial_fit``, or an infinite epsilon: every
    class is drawn by diffprivlib's own code, bit for bit the model diffprivlib fits."""
    X, y = _data()
    bounds = {"width 0": ([-1.0, 4.0], [3.0, 4.0]),
              "width near underflow": ([-1.0, 0.0], [3.0, 1e-170])}.get(case, BOUNDS)
    epsilon = np.inf if case == "infinite epsilon" else 1.0
    models = []
    for cls in (GaussianNB, FeaturesAtOnceGaussianNB):
        model = cls(epsilon=epsilon, bounds=bounds, random_state=3)
        if case == "partial_fit":
            model.partial_fit(X[:20], y[:20], classes=[0, 1]).partial_fit(X[20:], y[20:])
        else:
            model.fit(X, y)
        models.append(model)
    for name in ("theta_", "var_", "class_count_"):
        np.testing.assert_array_equal(getattr(models[1], name), getattr(models[0], name))


@pytest.mark.filterwarnings("ignore")  # error_score="raise", few rows: the configuration's
def test_only_the_partition_fits_use_it(record_calls):
    """DPGridSearchCV's partition fits are drawn at once -- none fails (``error_score`` raises)
    -- and the model it returns is diffprivlib's class; the random search's runs and DP-GIBO's
    fits, which are released, are diffprivlib's own fits."""
    X, y = _data(n=400, seed=1)
    drawn = record_calls(FeaturesAtOnceGaussianNB, "_draw_pending")
    model = GaussianNB(bounds=BOUNDS)
    grid = DPGridSearchCV(model, {"var_smoothing": [1e-9, 1e-2, 1.0]}, epsilon=2.0,
                          classes=[0, 1], random_state=0, error_score="raise").fit(X, y)
    assert len(drawn) == 3 * grid.n_partitions_  # one holdout fit per partition; no refit
    assert type(grid.best_estimator_) is GaussianNB
    drawn.clear()
    DPRandomSearchCV(model, {"var_smoothing": [1e-9, 1e-2]}, epsilon=2.0, classes=[0, 1],
                     n_iter=5, random_state=0).fit(X, y)
    box = ArrayRange([[-2.0, -1.0], [2.0, 8.0]], [[-1.0, 0.0], [4.0, 12.0]], as_tuple=True)
    DPGIBOSearchCV(model, {"bounds": box}, epsilon=2.0, classes=[0, 1],
                   random_state=0).fit(X, y)
    assert drawn == []
