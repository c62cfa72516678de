"""
Private random search next to scikit-learn's RandomizedSearchCV
===============================================================

``RandomizedSearchCV`` over a diffprivlib model returns a private *model*, but it picks the
hyperparameters from exact cross-validation scores: the choice itself leaks, and nothing
accounts for it. ``DPRandomSearchCV`` (Papernot & Steinke, ICLR 2022) makes the whole search
private:

* one *run* draws a candidate, fits the DP model and releases a noisy accuracy. For this
  diffprivlib ``LogisticRegression`` (its runs are fitted together) a run fits and scores all
  rows by default: the model gets four fifths of ``eps_Q``, the score a fifth (sequential
  composition). With ``validation_size=0.2`` -- the default for other models -- it fits a
  fixed 80 % of the rows and scores the other 20 % (parallel composition);
* the number of runs ``K`` is random (geometric law, the default, ``E[K] = n_iter``) and only
  the best run is released -- ``3 * eps_Q``-DP in total, whatever ``K`` turned out to be;
* with ``refit=True`` the winner is refitted on all rows (its model's epsilon more); with
  ``refit=False`` the winning run's model is returned at no extra cost.

``epsilon=1.0`` is the *total* budget (budget mode): the model's epsilon is scaled so that
tuning plus model cost exactly 1. Neither ``K`` nor the losing runs' scores are released.

Run with ``python examples/plot_random_search.py [path/to/adult.csv]``. Uses the UCI Adult data
when it is found, synthetic data otherwise.
"""

import math
import sys
import time
import warnings
from pathlib import Path

# skdptune first: on scikit-learn >= 1.9, importing it is what lets diffprivlib import
from skdptune import DPRandomSearchCV
from skdptune.datasets import load_classification

# isort: split
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from scipy.stats import loguniform
from sklearn.model_selection import RandomizedSearchCV, train_test_split
from threadpoolctl import threadpool_limits

# the Adult file of `make bench`, beside the repository; sphinx-gallery runs the examples from
# their folder without setting __file__
HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
ADULT = HERE.parents[1] / "shared" / "data" / "adult.csv"


def main():
    # diffprivlib's LogisticRegression calls a scipy option deprecated in recent scipy releases
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ADULT
    X, y, name = load_classification(path)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    print(f"data: {name}, {len(X_train)} training rows, {len(X_test)} test rows\n")

    # features lie in [0, 1]: sqrt(n_features) bounds every row's norm (a public fact)
    norm = math.sqrt(X.shape[1])
    model = LogisticRegression(epsilon=1.0, data_norm=norm)
    space = {"C": loguniform(1e-2, 1e2), "data_norm": [0.5, 1.0, 2.0, norm]}

    start = time.perf_counter()
    # one BLAS thread: on small machines multi-threaded BLAS slows these small fits down
    # (skdptune does the same internally)
    with threadpool_limits(limits=1, user_api="blas"):
        plain = RandomizedSearchCV(model, space, n_iter=10, cv=5, random_state=0).fit(
            X_train, y_train)
    t_plain = time.perf_counter() - start
    print("RandomizedSearchCV (tuning NOT private: 51 fits, exact 5-fold CV scores)")
    print(f"  selected C={plain.best_params_['C']:.3g}, "
          f"data_norm={plain.best_params_['data_norm']:.3g}; test accuracy "
          f"{plain.score(X_test, y_test):.3f}; {t_plain:.1f}s\n")

    for refit in (True, False):
        accountant = BudgetAccountant()
        start = time.perf_counter()
        private = DPRandomSearchCV(model, space, n_iter=10, epsilon=1.0, refit=refit,
                                   classes=[0, 1], random_state=0,
                                   accountant=accountant).fit(X_train, y_train)
        elapsed = time.perf_counter() - start
        print(f"DPRandomSearchCV(refit={refit}) (tuning and model private, total epsilon 1)")
        print(f"  selected C={private.best_params_['C']:.3g}, "
              f"data_norm={private.best_params_['data_norm']:.3g}; noisy in-sample "
              f"accuracy {private.best_score_:.3f}; test accuracy "
              f"{private.score(X_test, y_test):.3f}; {elapsed:.1f}s")
        print(f"  each run is eps_Q = {private.epsilon_run_:.3f}-DP; accountant charged once: "
              f"{accountant.spent_budget}\n")
    print(private.privacy_spent_)


if __name__ == "__main__":
    main()
