"""skdptune: differentially private hyperparameter tuning for scikit-learn."""

__version__ = "0.1.0.dev0"
