"""
Tuning a private regressor
==========================

diffprivlib's ``LinearRegression`` does not meet its guarantee (its noise is not sized for its
sensitivity), so skdptune refuses it and brings its own:
:class:`~skdptune.linear_model.SSPRegressor`, a ridge regression whose fit releases the rows'
Gram matrix and their cross products with the target with Laplace noise (pure epsilon-DP under
replace-one neighbours, the proof in the documentation).

Like every DP regressor it needs **public bounds**: ``bounds_X`` for the features and
``bounds_y`` for the target. Rows are clipped to them, and the noise grows with their width.
Choosing ``bounds_y`` is a trade-off a user cannot settle without the data: wide bounds clip
nothing and add much noise, tight ones add little noise and clip the tails. That makes it a
hyperparameter -- and tuning it on the private data must be private too.

Here the public range of the target is ``(-100, 100)`` -- what the user can vouch for without
looking -- while most targets lie within a few units of 0. The untuned default, fitted with the
public range, drowns in noise at small budgets; a search over tighter bounds finds the scale
privately. (Where the public bounds already fit the data, tuning can only spend budget: try
``Y_RANGE = (-20, 20)``, where the untuned default is within 0.02 of the non-private ridge and
both searches fall below it at the smallest budget.)

This example compares, at several total budgets:

* the **untuned default** (the widest public bounds, the whole budget on one fit);
* :class:`~skdptune.DPRandomSearchCV` over the ridge ``alpha`` and the target bounds;
* :class:`~skdptune.DPGridSearchCV` over the same candidates;
* non-private ``Ridge`` for reference (not private: a ceiling).

The target range a search declares is the union of its candidates' ``bounds_y``: ``y`` must lie
in it (a ``DomainError`` otherwise), and the searches score predictions clipped into it, so the
scores are bounded without looking at the data.
"""

# skdptune first: on scikit-learn >= 1.9, importing it is what lets diffprivlib import
from skdptune import DPGridSearchCV, DPRandomSearchCV
from skdptune.linear_model import SSPRegressor

# isort: split
import matplotlib.pyplot as plt
import numpy as np
from diffprivlib import BudgetAccountant
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split

#: the public range of the target: what a user knows about y without looking (its units)
Y_RANGE = (-100.0, 100.0)
#: candidate target bounds: the public range, and tighter ones that clip the tails
Y_BOUNDS = [Y_RANGE, (-25.0, 25.0), (-8.0, 8.0)]
SPACE = {"alpha": [1.0, 100.0, "adaptive"], "bounds_y": Y_BOUNDS}


def make_data(seed=0, n=12000, d=6):
    """A linear target with heavy-ish tails: most of y lies well inside the public range."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = X @ rng.normal(0, 1.5, size=d) + rng.standard_t(df=3, size=n)
    return X, np.clip(y, *Y_RANGE)


def r2(model, X, y):
    return float(model.score(X, y))


def main():
    X, y = make_data()
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    print(f"{len(X_train)} training rows, {X.shape[1]} features, y in {Y_RANGE}\n")
    ridge = r2(Ridge().fit(X_train, y_train), X_test, y_test)

    epsilons = [0.25, 0.5, 1.0, 4.0]
    seeds = range(2)
    rows = {"untuned default": [], "DPRandomSearchCV": [], "DPGridSearchCV": []}
    for total in epsilons:
        scores = {name: [] for name in rows}
        for seed in seeds:
            default = SSPRegressor(epsilon=total, bounds_X=(-1, 1), bounds_y=Y_RANGE,
                                   random_state=seed,
                                   accountant=BudgetAccountant()).fit(X_train, y_train)
            scores["untuned default"].append(r2(default, X_test, y_test))
            base = SSPRegressor(bounds_X=(-1, 1), bounds_y=Y_RANGE)
            for name, search in (
                    ("DPRandomSearchCV", DPRandomSearchCV(base, SPACE, epsilon=total,
                                                          random_state=seed)),
                    ("DPGridSearchCV", DPGridSearchCV(base, SPACE, epsilon=total,
                                                      random_state=seed))):
                search.set_params(accountant=BudgetAccountant()).fit(X_train, y_train)
                scores[name].append(r2(search, X_test, y_test))
                if total == 1.0 and seed == 0:
                    print(f"{name} at total epsilon 1 chose {search.best_params_}; "
                          f"spent {tuple(search.privacy_spent_)}")
        for name in rows:
            rows[name].append((np.mean(scores[name]), np.std(scores[name])))

    print(f"\ntest R^2 (mean over {len(seeds)} seeds); non-private Ridge: {ridge:.3f}")
    print("total epsilon      " + "".join(f"{e:>9g}" for e in epsilons))
    for name, values in rows.items():
        print(f"{name:<19}" + "".join(f"{m:>9.3f}" for m, _ in values))

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, values in rows.items():
        means, sds = np.array(values).T
        ax.errorbar(epsilons, means, yerr=sds, marker="o", capsize=3, label=name)
    ax.axhline(ridge, color="grey", linestyle="--", label="Ridge (not private)")
    ax.set_xscale("log")
    ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
    ax.set_xlabel("total epsilon (tuning + returned model)")
    ax.set_ylabel("test R$^2$")
    ax.set_title("Tuning SSPRegressor's ridge and target bounds")
    ax.legend()
    fig.tight_layout()
    plt.show()


if __name__ == "__main__":
    main()
