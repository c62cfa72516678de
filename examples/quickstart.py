"""
Quickstart: private tuning next to scikit-learn's GridSearchCV
==============================================================

``GridSearchCV`` over diffprivlib models gives a private *model*, but the chosen
hyperparameters are computed from the data without any privacy: they leak (Papernot & Steinke
show a membership attack through them), and the reported epsilon is wrong.
``DPRandomSearchCV`` makes the whole pipeline private and reports one honest (epsilon, delta).
It is the search to start with: on the benchmark suite's real tasks it closed the gap between
the untuned default and non-private tuning where the others did not (docs/choosing.md).

Run with ``make demo`` (or ``python examples/quickstart.py [path/to/adult.csv]``). Uses the
UCI Adult data when it is found, synthetic data otherwise.
"""

import sys
import time
from pathlib import Path

# skdptune first: on scikit-learn >= 1.9, importing it is what lets diffprivlib import
from skdptune import DPRandomSearchCV
from skdptune.datasets import load_classification

# isort: split
import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split

# the Adult file of `make bench`, beside the repository; sphinx-gallery runs the examples from
# their folder without setting __file__
HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
ADULT = HERE.parents[1] / "shared" / "data" / "adult.csv"


def main():
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ADULT
    X, y, name = load_classification(path)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    print(f"data: {name}, {len(X_train)} training rows, {len(X_test)} test rows\n")

    model = LogisticRegression(epsilon=1.0, data_norm=np.sqrt(X.shape[1]), max_iter=200)
    grid = {"C": [0.01, 0.1, 1.0, 10.0, 100.0]}

    start = time.perf_counter()
    plain = GridSearchCV(model, grid, cv=5).fit(X_train, y_train)
    t_plain = time.perf_counter() - start

    accountant = BudgetAccountant()
    start = time.perf_counter()
    # n_iter: the expected number of runs (default 1000 here); fewer is faster, and the
    # choice among them a little less reliable (docs/random_search.md)
    private = DPRandomSearchCV(model, grid, epsilon=2.0, n_iter=200, classes=[0, 1],
                               accountant=accountant, random_state=0).fit(X_train, y_train)
    t_private = time.perf_counter() - start

    print("GridSearchCV (tuning NOT private; only the final model's epsilon=1 is real)")
    print(f"  selected {plain.best_params_}, test accuracy {plain.score(X_test, y_test):.3f}, "
          f"{t_plain:.1f}s")
    print("DPRandomSearchCV (tuning and model private)")
    print(f"  selected {private.best_params_}, test accuracy "
          f"{private.score(X_test, y_test):.3f}, {t_private:.1f}s, "
          f"{private.n_iter_expected_:g} runs expected\n")
    print(private.privacy_spent_)
    print(f"\naccountant charged once: {accountant.spent_budget}")


if __name__ == "__main__":
    main()
