"""
Replacing GridSearchCV in an existing pipeline
==============================================

A typical scikit-learn workflow on census data: scale the numeric columns, one-hot encode the
categorical ones, fit a logistic regression, tune it with ``GridSearchCV``. This example turns
that workflow into a differentially private one, step by step:

1. ask skdptune which components are not private;
2. replace them with private or data-independent ones (diffprivlib's ``StandardScaler`` with
   public bounds, ``OneHotEncoder`` with public category lists, diffprivlib's
   ``LogisticRegression``);
3. replace ``GridSearchCV`` by ``DPRandomSearchCV`` -- one line (the grid becomes its
   ``param_distributions``), plus the public label set;
4. read the privacy report and let a diffprivlib ``BudgetAccountant`` enforce a budget.

The data are the UCI Adult census data when ``../shared/data/adult.csv`` is present (the
``make bench`` convention), and a synthetic table with the same columns otherwise.
"""

# %%
# The data
# --------
#
# Three numeric and three categorical columns. Their *domains* -- the ranges of the numbers and
# the lists of categories -- are public: they come from the data set's documentation, not from
# the records. That is what lets the preprocessing be private.

import warnings
from pathlib import Path

# skdptune first: on scikit-learn >= 1.9, importing it is what lets diffprivlib import
from skdptune import DPRandomSearchCV, NonPrivateComponentError, estimator_privacy
from skdptune.datasets import ADULT_FRAME_CATEGORIES, ADULT_FRAME_NUMERIC, load_adult_frame

# isort: split
import matplotlib.pyplot as plt
import numpy as np
from diffprivlib import BudgetAccountant
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from diffprivlib.models import StandardScaler as DPStandardScaler
from diffprivlib.utils import BudgetError
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

# diffprivlib's LogisticRegression uses a scipy option that recent scipy releases deprecate
warnings.filterwarnings("ignore", category=DeprecationWarning)

# the public domains, as skdptune.datasets records them: each numeric column's documented range
# (the DP scaler's bounds) and each categorical column's category list
NUMERIC = {name: bounds for name, (_, bounds) in ADULT_FRAME_NUMERIC.items()}
CATEGORIES = {name: list(values) for name, (_, values) in ADULT_FRAME_CATEGORIES.items()}
print("numeric ranges:", NUMERIC)
print("categories:", CATEGORIES)
# the Adult file of `make bench`, beside the repository (synthetic look-alikes without it);
# sphinx-gallery runs the examples from their folder without setting __file__
HERE = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
ADULT = HERE.parents[1] / "shared" / "data" / "adult.csv"

X, y, name = load_adult_frame(ADULT)
# 12,000 training rows keep this example under a minute; use all rows in practice
X_train, X_test, y_train, y_test = train_test_split(X, y, train_size=12000, test_size=8000,
                                                    random_state=0)
print(f"{name}: {len(X_train)} training rows, {len(X_test)} test rows")
X_train.head()

# %%
# The pipeline you have
# ---------------------
#
# ``estimator_privacy`` walks a pipeline and either returns its privacy cost or names the
# components that learn from the data without differential privacy. It reads no data.

existing = Pipeline([
    ("prep", ColumnTransformer([
        ("num", StandardScaler(), list(NUMERIC)),
        ("cat", OneHotEncoder(handle_unknown="ignore"), list(CATEGORIES)),
    ])),
    ("clf", LogisticRegression()),
])
try:
    estimator_privacy(existing)
except NonPrivateComponentError as error:
    print(error)

# %%
# The private pipeline
# --------------------
#
# * diffprivlib's ``StandardScaler`` estimates means and variances with noise, inside the
#   public ``bounds`` (values outside are clipped); it costs its ``epsilon``.
# * ``OneHotEncoder`` with the public category lists learns nothing from the data: it costs
#   nothing. ``handle_unknown="ignore"`` encodes a value outside the list (Adult's ``"?"``) as
#   all zeros, instead of failing on the data.
# * diffprivlib's ``LogisticRegression`` clips every row to the norm ``data_norm`` -- a
#   hyperparameter worth tuning.

bounds = (np.array([lo for lo, _ in NUMERIC.values()], dtype=float),
          np.array([hi for _, hi in NUMERIC.values()], dtype=float))
private = Pipeline([
    ("prep", ColumnTransformer([
        ("num", DPStandardScaler(bounds=bounds, epsilon=0.5), list(NUMERIC)),
        ("cat", OneHotEncoder(categories=list(CATEGORIES.values()), handle_unknown="ignore",
                              sparse_output=False), list(CATEGORIES)),
    ])),
    ("clf", DPLogisticRegression(epsilon=1.0, data_norm=2.0)),
])
grid = {"clf__data_norm": [0.5, 1.0, 2.0, 4.0]}
print("cost of one fit of the private pipeline (epsilon, delta):", estimator_privacy(private))

# %%
# GridSearchCV -> DPRandomSearchCV
# --------------------------------
#
# With ``GridSearchCV`` the *model* is private but the chosen ``data_norm`` is computed from
# exact cross-validation scores: the tuning is not private, and no accountant sees it (see the
# "why tuning leaks" example). ``DPRandomSearchCV`` takes the same estimator and grid, a total
# budget ``epsilon`` (the tuning and the returned pipeline), and the public label set
# ``classes``. It runs a random number of private fits of candidates drawn from the grid
# (about 1,000 here, each fitted and scored with noise on all the rows: the runs of a DP
# scaler and a logistic regression are fitted together, each with its own noise) and returns
# the best run's pipeline.
#
# Why not ``DPGridSearchCV``, the closer name? On this pipeline it is the weaker choice: it
# ranks the candidates on partitions of 100 rows, and its returned pipeline is one fresh
# private fit of its pick -- in three seeded fits on these rows it returned 0.718, 0.785 and
# 0.791 (the first below the majority-class rate printed below), where ``DPRandomSearchCV``
# returned 0.817-0.821 in about as much time (0.6 to 1.5 times the grid's); over three splits
# and three seeds (``benchmarks/bench_adult_pipeline.py``) 0.736 +- 0.095 against
# 0.817 +- 0.007. The choosing guide (docs/choosing.md) has the measurements.

with threadpool_limits(limits=1, user_api="blas"):  # many small fits: one BLAS thread is faster
    plain = GridSearchCV(private, grid, cv=5).fit(X_train, y_train)

accountant = BudgetAccountant(epsilon=3.0, delta=0.0)
search = DPRandomSearchCV(private, grid, epsilon=2.5, classes=[0, 1], accountant=accountant,
                          random_state=0)  # seeded for a reproducible page; None in production
search.fit(X_train, y_train)

print(f"GridSearchCV     (tuning NOT private): data_norm={plain.best_params_['clf__data_norm']}, "
      f"test accuracy {plain.score(X_test, y_test):.3f}")
print(f"DPRandomSearchCV (tuning private):   data_norm={search.best_params_['clf__data_norm']}, "
      f"test accuracy {search.score(X_test, y_test):.3f}")
print(f"majority class   (predicted always):    test accuracy "
      f"{max(y_test.mean(), 1 - y_test.mean()):.3f}")

# %%
# The privacy report and the accountant
# -------------------------------------
#
# ``privacy_spent_`` is the cost of the whole ``fit``, computed from the parameters alone: the
# randomized repetition, whose winning run *is* the returned pipeline (scaler and model: no
# refit, so no further cost). Each run's pipeline and noisy score are priced at a third of the
# total, the geometric law's factor. The accountant was charged exactly that, once.

print(search.privacy_spent_)
print(f"\naccountant: spent {accountant.total()}, remaining {accountant.remaining()}")

# %%
# A second search would cost another 2.5 and the budget of 3 does not allow it. The check
# happens before any data is read, so the refused fit costs nothing.

try:
    DPRandomSearchCV(private, grid, epsilon=2.5, classes=[0, 1],
                     accountant=accountant).fit(X_train, y_train)
except BudgetError as error:
    print("refused:", error)

# %%
# What the budget buys
# --------------------
#
# The cost of each part, as reported by the search (one part here: the tuning, which includes
# the returned pipeline).

parts = search.privacy_spent_.components
fig, ax = plt.subplots(figsize=(7, 2.4))
left = 0.0
for part in parts:
    ax.barh(0, part.epsilon, left=left, height=0.6)
    label = part.name.replace(": ", ":\n").replace(" (", "\n(")
    ax.text(left + part.epsilon / 2, 0, f"{label}\nε = {part.epsilon:g}", ha="center",
            va="center", fontsize=8, color="white")
    left += part.epsilon
ax.axvline(accountant.epsilon, color="k", linestyle="--")
ax.text(accountant.epsilon, 0.42, " accountant's budget", fontsize=8, va="center")
ax.set(xlim=(0, 3.6), ylim=(-0.5, 0.5), yticks=[], xlabel="ε",
       title=f"privacy_spent_.epsilon = {search.privacy_spent_.epsilon:g}")
fig.tight_layout()
plt.show()
