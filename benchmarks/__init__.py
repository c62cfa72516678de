"""Benchmarks of skdptune: run ``python -m benchmarks.run`` (or ``make bench``)."""

# first, before any benchmark imports diffprivlib: on scikit-learn >= 1.9 importing skdptune is
# what lets diffprivlib import (skdptune/_compat.py), and every benchmark runs as a module of
# this package (python -m benchmarks.<name>)
import skdptune  # noqa: F401
