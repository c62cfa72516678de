"""
Choosing epsilon with a privacy-utility Pareto front
====================================================

Every differentially private model starts with a question nobody can answer by intuition:
*which epsilon?* ``privacy_utility_front`` (DPareto, Avent et al. 2020) maps the trade-off of a
model: it searches the model's settings -- here diffprivlib's ``LogisticRegression`` over its
``epsilon`` and its regularisation ``C`` -- for the best cross-validated balanced accuracy at
each privacy cost, with Bayesian optimisation (two Gaussian processes and the
hypervolume-based probability of improvement), and returns every evaluated point with the
non-dominated ones: the front. It also scores two references on the same splits -- a
majority-class predictor (the floor: a point near it has learnt nothing) and scikit-learn's
``LogisticRegression`` with the same ``C``, without privacy (the ceiling) -- and the plot shows
them as lines, with every point's spread over the repeats as an error bar.

**The front is not private.** It is computed from exact scores, so it leaks the data it was
computed on. Compute it on public or proxy data (here: a slice of Adult that stands in for a
public sample of the same population) or show it only to people trusted with the data. Then
train the chosen configuration once, privately, on the private data: that fit is the only
use of the private rows, and it costs exactly the chosen epsilon.

Run with ``python examples/plot_pareto_front.py [path/to/adult.csv]``. Uses the UCI Adult data
when it is found, synthetic data otherwise. Shows the figure when a display is available.
"""

import math
import os
import sys
import warnings
from pathlib import Path

# skdptune first: on scikit-learn >= 1.9, importing it is what lets diffprivlib import
from skdptune import privacy_utility_front
from skdptune.datasets import load_classification
from skdptune.pareto import NotPrivateWarning

# isort: split
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split

# sphinx-gallery (and tests/test_examples.py) run the examples from their folder without
# setting __file__
HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
ADULT = HERE.parents[1] / "shared" / "data" / "adult.csv"
BUDGET = 1.0  # the most epsilon we are willing to spend on the model


def main():
    import matplotlib

    if not os.environ.get("DISPLAY"):
        matplotlib.use("Agg")  # headless: draw without showing
    import matplotlib.pyplot as plt

    # diffprivlib's LogisticRegression calls a scipy option deprecated in recent scipy releases
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    # and at a large C its noisy objective may stop short of lbfgs's tolerance: the model is
    # scored as it is, like every other point
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ADULT
    X, y, name = load_classification(path)
    # a public (or proxy) sample for the front; the rest is the private data and a test set
    X_public, X_private, y_public, y_private = train_test_split(
        X, y, train_size=4000, random_state=0, stratify=y)
    X_train, X_test, y_train, y_test = train_test_split(
        X_private, y_private, test_size=0.25, random_state=0, stratify=y_private)
    print(f"data: {name}; front on {len(X_public)} public rows, private training on "
          f"{len(X_train)} rows, test on {len(X_test)} rows\n")

    # features lie in [0, 1]: sqrt(n_features) bounds every row's norm (a public fact)
    model = LogisticRegression(data_norm=math.sqrt(X.shape[1]))
    space = {"epsilon": (0.01, 10.0, "log"), "C": (1e-2, 1e2, "log")}
    with warnings.catch_warnings():
        # we know: this runs on the public sample only
        warnings.simplefilter("ignore", NotPrivateWarning)
        # the default scoring of a classifier is balanced accuracy: Adult is 76 % negative, and
        # plain accuracy would reward the near-constant predictors that tiny epsilons produce
        # by chance; balanced accuracy gives them 0.5, which is also the anti-ideal utility
        front = privacy_utility_front(model, space, X_public, y_public, cv=3, n_repeats=3,
                                      n_initial=8, n_iter=16, random_state=0, verbose=1)
    print(f"\n{front}")
    for ref in front.references.values():
        print(f"reference {ref.label}: balanced accuracy {ref.utility:.3f} +- "
              f"{ref.utility_std:.3f}")
    print("front (epsilon -> balanced accuracy +- sd over repeats, C):")
    for i in front.pareto_indices:
        print(f"  {front.epsilon[i]:7.3f} -> {front.utility[i]:.3f} +- "
              f"{front.utility_std[i]:.3f}  (C={front.params[i]['C']:.3g})")

    chosen = front.best_under(BUDGET)
    ceiling = front.references["nonprivate"].utility
    print(f"\noperating point for a budget of epsilon <= {BUDGET:g}: epsilon="
          f"{chosen.epsilon:.3f}, C={chosen.params['C']:.3g}, expected balanced accuracy "
          f"{chosen.utility:.3f} ({ceiling - chosen.utility:.3f} below the non-private model)")

    # the one private step: train the chosen configuration on the private rows
    accountant = BudgetAccountant()
    final = LogisticRegression(data_norm=math.sqrt(X.shape[1]), accountant=accountant,
                               **chosen.params).fit(X_train, y_train)
    test_score = balanced_accuracy_score(y_test, final.predict(X_test))
    print(f"private model: test balanced accuracy {test_score:.3f}, "
          f"spent {accountant.spent_budget}")

    ax = front.plot()
    ax.scatter([chosen.epsilon], [chosen.utility], marker="*", s=250, color="C3", zorder=4,
               label=f"chosen (epsilon <= {BUDGET:g})")
    ax.axvline(BUDGET, color="C3", ls=":", lw=1)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title("diffprivlib LogisticRegression: privacy-utility front (public sample)")
    if matplotlib.get_backend().lower() != "agg":
        plt.show()


if __name__ == "__main__":
    main()
