"""scikit-learn's estimator checks, where they apply to private searches.

Expected failures, and why they cannot pass for a differentially private search:

* ``check_estimators_overwrite_params``: the search charges its ``accountant`` parameter with
  ``privacy_spent_`` -- the one mutation the privacy contract requires.
* ``check_classifiers_train`` and ``check_classifiers_one_label_sample_weights``: the returned
  model is a DP model (noise by design), so it does not reach the accuracy those checks demand
  on their tiny data sets.
* ``check_classifiers_classes``: it fits string labels the search has not been told about. The
  label set is public information that the user declares (``classes``); a label outside it is
  refused with a fixed ``DomainError`` (docs/privacy.md).
* ``check_dtype_object``: its last step puts a ``dict`` into one record of an object array and
  expects numpy's ``TypeError``. That record is found only inside the private region, and a
  failure there leaves as ``PrivateFitError`` with a fixed message (the original error could
  describe the record).
"""

import pytest
import sklearn
from diffprivlib import BudgetAccountant
from diffprivlib.models import GaussianNB
from scipy.stats import loguniform

from skdptune import DPGridSearchCV, DPRandomSearchCV

pytestmark = pytest.mark.filterwarnings("ignore")

if tuple(int(v) for v in sklearn.__version__.split(".")[:2]) < (1, 6):
    pytest.skip("expected_failed_checks needs scikit-learn >= 1.6", allow_module_level=True)

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

EXPECTED = {
    "check_estimators_overwrite_params": "charges its accountant (privacy contract)",
    "check_classifiers_train": "DP model: noisy by design",
    "check_classifiers_one_label_sample_weights": "DP model: noisy by design",
    "check_classifiers_classes": "undeclared labels are outside the declared domain",
    "check_dtype_object": "a bad record fails inside the private region: PrivateFitError",
}


#: the labels of scikit-learn's check data sets (declared: the label set is public)
CLASSES = [0, 1, 2, 3]


def _estimators():
    nb = GaussianNB(epsilon=1.0, bounds=(-10.0, 10.0))
    return [
        DPGridSearchCV(nb, {"var_smoothing": [1e-9, 1e-3]}, min_partition_size=2,
                       classes=CLASSES, random_state=0, accountant=BudgetAccountant()),
        # refit=True: the checks' tiny datasets (e.g. one label) need the model fitted on all
        # rows to predict that label through the DP noise; the default refit=False returns the
        # winning run's model, fitted on 70 % of them; epsilon=None: every fit at the
        # estimator's own epsilon (1.0), as for the grid's returned model
        DPRandomSearchCV(nb, {"var_smoothing": loguniform(1e-9, 1e-3)}, n_iter=2,
                         epsilon=None, validation_size=0.3, classes=CLASSES, random_state=0,
                         refit=True, accountant=BudgetAccountant()),
    ]


@parametrize_with_checks(_estimators(), expected_failed_checks=lambda est: EXPECTED)
def test_sklearn_compatible(estimator, check):
    check(estimator)
