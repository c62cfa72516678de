"""Benchmarks of skdptune: run ``python -m benchmarks.run`` (or ``make bench``)."""
