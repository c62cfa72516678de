"""Evaluators: what a candidate's utility is on private data, and with what sensitivity.

Every evaluator returns *exact* utilities, which are private: they go straight to a private
mechanism (a selector or a noisy release) and are never stored, printed or logged.
"""
