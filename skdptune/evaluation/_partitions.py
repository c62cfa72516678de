"""Subsample-and-aggregate evaluator.

Algorithm 1 of Ding, Wu, Xu & Pan, "Constant-overhead DP hyperparameter tuning"; the method is
described in docs/grid_search.md ("The method") and the sensitivity ``1/k`` of its aggregate is
proved in docs/selection.md, section 1.

Privacy argument (replace-one neighbours, ``n`` public)
-------------------------------------------------------
The rows are split into ``k`` disjoint partitions by a random permutation drawn independently of
the data (balanced sizes: they differ by at most one row and depend only on ``n`` and ``k``).
Candidate ``s`` gets a utility ``u_s^(i)`` in [0, 1] computed from partition ``i``'s rows only:
a clone is fitted on the partition's inner training part and scored on its inner validation part
(inner holdout or inner K-fold *inside the partition*). The aggregate is
``u_s = mean_i u_s^(i)``.

Replacing one record changes exactly one partition, hence at most one term of the mean, by at
most 1 (all terms lie in [0, 1]): the vector ``(u_s)_s`` has sensitivity ``1/k`` in every
coordinate simultaneously. This holds whatever the partition models are -- DP fits with any
``epsilon``, or non-private fits -- because they are never released; only a private selector's
output over ``(u_s)`` is. That is why ``inner_epsilon`` can be chosen for utility alone: it does
not enter the privacy bound.

The same argument covers metadata routed to the scorer (``sample_weight`` and any other
row-aligned metadata, through scikit-learn's metadata routing): partition ``i``'s utility is
computed from partition ``i``'s validation rows *and their metadata only* (the metadata are
indexed with the same rows), and it is clipped to [0, 1] whatever the weights. A record is its
features, label and weight together; replacing one -- all three -- still changes one
partition's term by at most 1, so the aggregate by at most ``1/k``. No bound on the weights is
needed. (A weighted *mean over validation rows*, as in randomized repetition, has no such
bound: one record's weight can move it by up to the whole range.) Metadata for a user's inner
splitter (``groups``) is indexed with the partition's rows the same way.

The same argument covers failures: a fit or score that raises inside a partition gives that
partition the utility ``error_score``, a value in [0, 1] like any other, so a failure moves the
mean by at most ``1/k`` too and needs no special treatment. What must not escape is the failure
itself: the worker function runs under :func:`skdptune._private.silenced` (no warning leaves it)
and catches every exception. The inner splits are data-independent (a seeded holdout or a
seeded, *unstratified* K-fold): stratifying would read the labels and warn or raise depending
on how many members a class has in the partition.

The exact utilities returned by :meth:`PartitionEvaluator.evaluate` are private. The caller
must pass them straight to a selector and must not store, print or log them.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
from joblib import effective_n_jobs
from sklearn.model_selection import KFold
from sklearn.utils import _safe_indexing
from sklearn.utils.parallel import delayed
from sklearn.utils.validation import _num_samples

from .._private import LEAKS, private_n_jobs, run_tasks, silenced
from ._batched import (
    batched_model,
    batched_partition_utilities,
    is_accuracy,
    model_rows,
    plain_model_rows,
    scaled_model,
    shares_statistics,
    steps_give_dense_rows,
    supports_batched_fits,
    tight_models,
)
from ._batched_nb import batched_naive_bayes, naive_bayes_utilities
from ._batched_runs import unit_utilities
from ._batched_ssp import partition_utilities
from ._fit import (
    PreparedTemplate,
    candidate_key,
    candidate_templates,
    failure_utility,
    fit_and_utility,
    fit_settings,
    fitting,
    for_workers,
    instantiate,
    received,
    rows_of,
    single_threaded_blas,
    steps_key,
)

__all__ = ["PartitionEvaluator", "auto_n_partitions", "check_inner_splitter",
           "make_partitions"]

#: distinct synthetic groups in the public trial of a user's splitter
_TRIAL_GROUPS = 10


def auto_n_partitions(n_samples: int, min_partition_size: int) -> int:
    """Data-independent default number of partitions: as many as the minimum size allows.

    ``k = floor(n / min_partition_size)``. More partitions lower the sensitivity ``1/k`` of the
    aggregated utility (less selection noise) at the price of smaller, noisier partition fits;
    ``min_partition_size`` sets that trade-off (see docs/calibration.md for the measurements).
    """
    return int(n_samples // min_partition_size)


def make_partitions(n_samples: int, n_partitions: int, rng) -> list[np.ndarray]:
    """Split ``range(n_samples)`` into ``n_partitions`` disjoint, balanced index arrays.

    The split is a uniformly random permutation drawn from ``rng``; it never looks at the data.
    """
    order = rng.permutation(n_samples)
    return [np.sort(part) for part in np.array_split(order, n_partitions)]


def check_inner_splitter(cv, n_rows: int, classes, split_params: dict | None = None) -> None:
    """Try a user's splitter on a synthetic partition (public: sizes, labels, which metadata
    was given), so that a splitter that cannot work -- a group splitter without ``groups`` --
    fails before any data is read, with its own message.

    ``split_params``: the splitter's metadata (names matter, values are not read: ``groups``
    becomes a few synthetic groups, other row-aligned arrays ones, scalars pass unchanged).
    Partitions of the real data may still make it fail (too few groups in one partition);
    such a partition gets ``error_score``, like any failed fit (sensitivity unchanged).
    """
    if not hasattr(cv, "split"):
        return
    rows = np.arange(n_rows)
    y = None if classes is None else np.asarray(classes)[rows % len(classes)]
    params = {name: (np.ones(n_rows) if hasattr(value, "__len__")
                     and not isinstance(value, (str, dict)) else value)
              for name, value in (split_params or {}).items()}
    if "groups" in params:
        params["groups"] = rows % min(n_rows, _TRIAL_GROUPS)
    groups = params.pop("groups", None)
    try:
        splits = list(cv.split(rows, y, groups, **params))
    except Exception as exc:  # about synthetic data: public, report it
        raise ValueError(
            f"The inner splitter cv={cv!r} fails on a synthetic partition of {n_rows} rows, "
            f"before any private data was read ({type(exc).__name__}: {exc}). Nothing was "
            "charged."
        ) from None
    if not splits:
        raise ValueError(f"The inner splitter cv={cv!r} yields no split. Nothing was charged.")


def _rows_of(params, rows):
    """``params`` restricted to ``rows``: row-aligned values indexed, others unchanged (they
    were checked before the data was read: every array-like is row-aligned)."""
    return {name: (_safe_indexing(value, rows) if hasattr(value, "__len__")
                   and not isinstance(value, (str, dict)) else value)
            for name, value in (params or {}).items()}


def _inner_splits(cv, rows, y, rng, split_params=None):
    """(train, validation) index pairs inside one partition, in global row numbers.

    A float or an int gives data-independent splits (holdout, shuffled ``KFold``); a user's
    splitter is called as given (with the partition's labels and, when given, its metadata
    -- ``groups`` and what routing sends it -- restricted to the partition's rows) inside the
    silenced worker.
    """
    if isinstance(cv, numbers.Real) and not isinstance(cv, numbers.Integral):
        # holdout: a data-independent random validation fraction of the partition
        shuffled = rows[rng.permutation(len(rows))]
        n_val = max(1, int(np.ceil(cv * len(rows))))
        return [(np.sort(shuffled[n_val:]), np.sort(shuffled[:n_val]))]
    if isinstance(cv, numbers.Integral):
        seed = int(rng.randint(np.iinfo(np.int32).max))
        splitter = KFold(n_splits=cv, shuffle=True, random_state=seed)
    else:
        splitter = cv
    y_rows = None if y is None else _safe_indexing(y, rows)
    params = _rows_of(split_params, rows)
    groups = params.pop("groups", None)
    return [(rows[tr], rows[te]) for tr, te in splitter.split(rows, y_rows, groups, **params)]


def _partition_splits(cv, rows, y, error_score, split_seed, split_params=None):
    """The inner splits of one partition, or ``None`` where a user's splitter fails on it.
    skdptune's own (``cv`` a number) are the same for every candidate: seeded by the
    partition."""
    try:
        return _inner_splits(cv, rows, y, np.random.RandomState(split_seed), split_params)
    except LEAKS:
        raise
    except Exception:
        # a user's splitter that fails on this partition: a failure is an output in [0, 1]
        if error_score == "raise":
            raise
        return None


def _partition_fits(prepared, splits, error_score, fit_seed):
    """The fits of one candidate on one partition, one entry per inner split (``splits``, of
    :func:`_partition_splits`): ``(template, seed, train, validation)``, or the utility
    ``error_score`` of a split whose settings do not apply; a splitter that failed on the
    partition gives the one entry ``error_score``.

    ``prepared(n_train)`` is the candidate's :class:`~._fit.PreparedTemplate` for a fit on
    ``n_train`` rows (the settings of :func:`_partition_fit_settings`).
    """
    if splits is None:
        return [failure_utility(error_score)]
    entries = []
    for r, (train, test) in enumerate(splits):
        seed = None if fit_seed is None else (fit_seed + r) % (2**32)
        try:
            template = prepared(len(train))
        except LEAKS:
            raise
        except Exception:
            if error_score == "raise":
                raise
            entries.append(failure_utility(error_score))  # settings that do not apply
            continue
        entries.append((template, seed, train, test))
    return entries


def _mean_utility(utilities):
    """A partition's utility: the mean of its splits' utilities, summed in split order."""
    total = 0.0
    for utility in utilities:
        total += utility
    return total / len(utilities)


def _partition_utility(prepared, X, y, rows, scorer, cv, padding, fit_params, error_score,
                       split_seed, fit_seed, split_params=None, score_params=None):
    """Mean utility of one candidate on one partition (private; returned to the evaluator):
    its fits (:func:`_partition_fits`) one by one. The scorer gets the metadata
    ``score_params`` of the validation rows only.
    """
    splits = _partition_splits(cv, rows, y, error_score, split_seed, split_params)
    return _mean_utility([
        entry if not isinstance(entry, tuple) else fit_and_utility(
            entry[0], X, y, entry[2], entry[3], scorer, fit_params=fit_params,
            error_score=error_score, padding=padding, seed=entry[1], score_params=score_params)
        for entry in _partition_fits(prepared, splits, error_score, fit_seed)])


def _chunk_utilities(templates, X, y, chunk, parts, scorer, cv, padding, fit_params,
                     error_score, seeds, settings, n_samples, split_params=None,
                     score_params=None, naive_bayes=()):
    """Utilities of every candidate on the partitions ``chunk``: one joblib task.

    Tasks are chunks of partitions, not single fits, so that ``X`` travels to a worker once
    per chunk. Seeds depend on (candidate, partition) only, never on the chunking. Runs
    silenced: no warning leaves the worker. The candidates ``naive_bayes`` (diffprivlib's
    ``GaussianNB``, :func:`~._batched_nb.batched_naive_bayes`) are fitted together, the same
    fits (:func:`~._batched_nb.naive_bayes_utilities`); the others one by one.
    """
    X, y = received(X), received(y)
    out = np.empty((len(templates), len(chunk)))
    cache = {}

    def prepared_for(i):
        def prepared(n_train):
            if (i, n_train) not in cache:
                cache[i, n_train] = PreparedTemplate(
                    templates[i], **_partition_fit_settings(*settings, n_samples, n_train))
            return cache[i, n_train]
        return prepared

    together = []  # (candidate, column, its partition's entries)
    with silenced():
        for c, j in enumerate(chunk):
            split_seed = seeds.seed("split", j)
            splits = (_partition_splits(cv, parts[j], y, error_score, split_seed, split_params)
                      if naive_bayes else None)
            for i in range(len(templates)):
                fit_seed = seeds.seed("fit", i, j) if seeds.seeded else None
                if i in naive_bayes:
                    together.append((i, c, _partition_fits(prepared_for(i), splits,
                                                           error_score, fit_seed)))
                    continue
                out[i, c] = _partition_utility(
                    prepared_for(i), X, y, parts[j], scorer, cv, padding, fit_params,
                    error_score, split_seed, fit_seed, split_params, score_params,
                )
        if together:
            fitted = iter(naive_bayes_utilities(
                [entry for _, _, entries in together for entry in entries
                 if isinstance(entry, tuple)], X, y, scorer, padding, error_score))
            for i, c, entries in together:
                out[i, c] = _mean_utility([next(fitted) if isinstance(entry, tuple) else entry
                                           for entry in entries])
    return out


def _fit_units(parts, cv, y, seeds, split_params=None):
    """``(partition, split number, train, validation)`` of every partition fit.

    The inner splits of :func:`_partition_utility`, computed once for all candidates (they
    depend on the partition only). A partition whose splitter fails has no unit: it keeps
    ``error_score``. Runs silenced (a user's splitter sees the partition's labels).
    """
    units = []
    # the generator of seeds.rng("split", j), re-seeded in place: the same state as a new
    # RandomState of that seed, without building one per partition
    generator = np.random.RandomState()
    split_seeds = seeds.seeds("split", np.arange(len(parts))).tolist()
    with silenced():
        for j, rows in enumerate(parts):
            generator.seed(split_seeds[j])
            try:
                splits = _inner_splits(cv, rows, y, generator, split_params)
            except LEAKS:
                raise
            except Exception:
                continue
            units += [(j, r, train, test) for r, (train, test) in enumerate(splits)]
    return units


def transformed_units(template, X, y, units, padding):
    """Every partition fit's rows, transformed as its one-by-one fit transforms them.

    ``template``: a pipeline whose steps before its model are data-independent
    (:func:`~._batched.batched_model`). For each unit ``(partition, split, train, test)`` a
    fresh copy of those steps is fitted on the train rows plus the padding and transforms them,
    then the validation rows: the calls of the unit's one-by-one ``Pipeline.fit`` and
    ``predict``, on the same rows, so nothing is assumed of the steps.

    Returns ``(stacks, failed)``. ``stacks``: one ``(Z, labels, units)`` per width of the
    transformed rows -- the rows of its units stacked, their labels, and its units as row
    numbers into them (each unit's training rows ending with its own padding rows). ``failed``:
    the ``(partition, split)`` of the units whose fit fails (``error_score``): a step raises or
    drops rows, or returns rows that diffprivlib's conversion refuses
    (:func:`~._batched.model_rows`) or of another width for validation than for training.
    Each unit's outcome depends on its own rows only: whether the units are batched was
    decided on public rows (:func:`~._batched.steps_give_dense_rows`), and one record, which
    lies in one partition, must not move the others (an audit found a step whose output width
    one record decided moving 59 of 60 partition utilities when the choice followed the rows:
    docs/grid_search.md). PRIVATE. Runs silenced.
    """
    steps = instantiate(template)[:-1]
    by_width: dict[int, tuple[list, list, list]] = {}
    sizes: dict[int, int] = {}
    failed = []
    with silenced():
        for j, r, train, test in units:
            try:
                X_fit, y_fit, _ = rows_of(X, y, train, {}, padding=padding)
                X_test = _safe_indexing(X, test)
                fitted = copy.deepcopy(steps)
                with fitting():
                    # (a pipeline of the model alone: the rows themselves)
                    Z_fit = fitted.fit_transform(X_fit, y_fit) if steps.steps else X_fit
                    Z_test = fitted.transform(X_test) if steps.steps else X_test
            except LEAKS:
                raise
            except Exception:
                failed.append((j, r))
                continue
            Z_fit, Z_test = model_rows(Z_fit), model_rows(Z_test)
            if (Z_fit is None or Z_test is None or Z_fit.shape[1] != Z_test.shape[1]
                    or len(Z_fit) != len(y_fit) or len(Z_test) != len(test)):
                failed.append((j, r))  # (the one-by-one fit or its score raises)
                continue
            width = Z_fit.shape[1]
            blocks, labels, out = by_width.setdefault(width, ([], [], []))
            start = sizes.get(width, 0)
            blocks += [Z_fit, Z_test]
            labels += [np.asarray(y_fit), np.asarray(_safe_indexing(y, test))]
            middle, end = start + len(Z_fit), start + len(Z_fit) + len(Z_test)
            out.append((j, r, np.arange(start, middle), np.arange(middle, end)))
            sizes[width] = end
    stacks = [(np.vstack(blocks), np.concatenate(labels), out)
              for blocks, labels, out in by_width.values()]
    return stacks, failed


def _unit_views(templates, candidates, X, y, units, padding, score_params):
    """The rows the batched solves see, or ``None`` (the one-by-one fits): ``(views,
    failures)``, a view ``(members, X, y, units, padding, padded)`` per group of candidates and
    width of its rows, a failure ``(members, partitions)`` per group whose units fail.

    Plain models: one view, the rows themselves. Pipelines: the candidates that set the steps
    before the model alike (:func:`~._fit.steps_key`) share :func:`transformed_units`; scorer
    metadata, aligned with the untransformed rows, go one by one. The choice between the two
    paths is public (the configuration, and :func:`~._batched.steps_give_dense_rows`).
    """
    if all(batched_model(t, statistics=True) is t for t in templates):
        return [(np.arange(len(templates)), X, y, units, padding, 0)], []
    if score_params:
        return None
    final = templates[0].steps[-1][0]
    groups = {}
    for i, params in enumerate(candidates):
        groups.setdefault(steps_key(candidate_key(params), final, i), []).append(i)
    if not all(steps_give_dense_rows(instantiate(templates[members[0]])[:-1], padding)
               for members in groups.values()):
        return None
    views, failures = [], []
    padded = len(padding)
    for members in groups.values():
        stacks, failed = transformed_units(templates[members[0]], X, y, units, padding)
        views += [(np.array(members), Z, labels, view_units, None, padded)
                  for Z, labels, view_units in stacks]
        if failed:
            failures.append((np.array(members), np.array([j for j, _ in failed])))
    return views, failures


def _candidates_utilities(group, X, y, n_parts, units, scorer, padding, error_score, seeds,
                          settings, n_samples, score_params=None, padded=0, keys=None):
    """Utilities of the candidates ``group`` (``(i, template)`` pairs) on the units of one
    view, in one batched solve: one joblib task. Returns ``(sums, counts)``: per candidate and
    partition the sum of its units' utilities, shape ``(len(group), n_parts)``, and per
    partition the number of its units in the view.

    The fits and their seeds are those of :func:`_chunk_utilities` (seeds depend on
    (candidate, partition, split) only); they go through
    :func:`~._batched.batched_partition_utilities` -- or, for pipelines with a DP scaler
    before the model (:func:`~._batched.scaled_model`), unit by unit through
    :func:`~._batched_runs.unit_utilities` (``keys``: the candidates'
    :func:`~._fit.candidate_key`, which let the candidates that set the steps alike share
    them). ``X``, ``units`` and ``padded``: the rows of :func:`_unit_views`. Runs silenced.
    """
    X, y = received(X), received(y)
    inner_epsilon, inner_params, epsilons = settings
    statistics = shares_statistics(group[0][1])  # SSPRegressor: as one by one (_batched_ssp)
    # a pipeline with a DP scaler: the one-by-one fits' settings (_batched_runs.unit_utilities)
    scaled = scaled_model(group[0][1]) is not None
    if inner_epsilon == "scaled" and inner_params == "scaled" and not (statistics or scaled):
        # the returned model in miniature, exactly: its epsilon, C and rows (_batched)
        model_rows = n_samples + (len(padding) if padding is not None else padded)

        def settings_of(n_train):
            return fit_settings(epsilons)
    else:
        model_rows = None

        def settings_of(n_train):
            return _partition_fit_settings(*settings, n_samples, n_train)

    owners = np.array([j for j, _, _, _ in units], dtype=np.int64)
    splits = np.array([r for _, r, _, _ in units], dtype=np.int64)
    jobs = []
    for i, template in group:
        # seeds.seed("fit", i, j) + r for every unit, computed at once
        fit_seeds = ((seeds.seeds("fit", i, owners) + splits) % (2**32)
                     if seeds.seeded else None)
        jobs.append((template, fit_seeds, settings_of, model_rows))
    fits = [(train, test) for _, _, train, test in units]
    with silenced():
        if scaled:
            utilities = unit_utilities(
                [(template, fit_seeds, key) for (template, fit_seeds, _, _), key
                 in zip(jobs, keys or [None] * len(group), strict=True)],
                fits, X, y, scorer, padding, error_score, settings_of)
        elif statistics:
            utilities = partition_utilities([job[:3] for job in jobs], fits, X, y, scorer,
                                            error_score, score_params)
        else:
            utilities = batched_partition_utilities(jobs, fits, X, y, scorer, padding,
                                                    error_score, score_params, padded=padded)
    sums = np.array([np.bincount(owners, weights=values, minlength=n_parts)
                     for values in utilities]).reshape(len(group), n_parts)
    return sums, np.bincount(owners, minlength=n_parts)


#: Approximate upper bound on the stacked rows of one batched solve (bytes of its design
#: array). Candidates are solved together up to this size: on small feature counts a
#: vectorised pass costs mostly its fixed overhead, which grouping shares; on large ones the
#: pass is dominated by arithmetic and one candidate per task balances the workers better.
BATCH_BYTES = 16 * 2**20


def _candidate_groups(n_candidates, bytes_per_candidate, n_jobs, candidates=None):
    """Groups of candidate indices: as few as the memory cap allows, a multiple of ``n_jobs``,
    at most one per candidate, of sizes that differ by at most one.

    Candidates that share a parameter value tend to cost alike (a grid's fast and slow corners),
    so every group should mix the values: with ``candidates`` (their parameter dicts, public),
    each in turn joins the group with room that holds the fewest candidates sharing one of its
    values -- a grid ``C x data_norm`` dealt to two groups becomes a checkerboard; without,
    round-robin by index (which on a grid whose last axis has an even length gives one group
    half of that axis's values).
    """
    n_groups = max(1, -(-n_candidates * bytes_per_candidate // BATCH_BYTES))
    n_groups = min(n_candidates, -(-n_groups // n_jobs) * n_jobs)
    if candidates is None or n_groups == 1:
        return [np.arange(g, n_candidates, n_groups) for g in range(n_groups)]
    room = [n_candidates // n_groups + (g < n_candidates % n_groups) for g in range(n_groups)]
    members = [[] for _ in range(n_groups)]
    shared = [{} for _ in range(n_groups)]  # per group: how many members hold each value
    for i, params in enumerate(candidates):
        values = [(name, repr(value)) for name, value in sorted(params.items())]
        g = min((g for g in range(n_groups) if len(members[g]) < room[g]),
                key=lambda g: (sum(shared[g].get(v, 0) for v in values), len(members[g]), g))
        members[g].append(i)
        for v in values:
            shared[g][v] = shared[g].get(v, 0) + 1
    return [np.array(m) for m in members]


def _partition_fit_settings(inner_epsilon, inner_params, epsilons, n_samples, n_train):
    """How to set up a partition fit on ``n_train`` rows (never released): keyword arguments of
    :func:`~skdptune.evaluation._fit.instantiate`.

    The aim is the returned model in miniature: the model fitted on all ``n_samples`` rows, its
    DP epsilons set by ``epsilons`` (:func:`~._fit.fit_settings`: a factor, or the search's
    pricing in budget mode). These settings approximate it for the one-by-one fits; the batched
    fits of diffprivlib's ``LogisticRegression`` do it exactly (:mod:`._batched`,
    :func:`_candidates_utilities`).
    """
    factor = n_samples / n_train
    model = fit_settings(epsilons)
    settings = {}
    if inner_epsilon == "same":
        settings.update(model)
    elif inner_epsilon == "scaled":
        # the full-data model's noise level: DP noise in these models scales as 1 / (n * eps)
        settings.update(model)
        settings["epsilon_scale"] = (model.get("epsilon_scale") or 1.0) * factor
    else:
        settings["epsilon_total"] = float(inner_epsilon)
    if inner_params == "scaled":
        # the full-data model's regularisation: C weighs a sum of n losses
        settings["row_factor"] = factor
    return settings


class PartitionEvaluator:
    """Aggregated utility of each candidate over ``k`` disjoint partitions.

    Sensitivity of every aggregated utility under replace-one: ``1 / n_partitions``.

    Parameters
    ----------
    estimator : estimator
        The base estimator (cloned for every fit; never modified).
    scorer : BoundedScorer
        Maps a fitted estimator and rows to a utility in [0, 1].
    n_partitions : int
        Number of disjoint partitions ``k``.
    cv : float, int or CV splitter
        Inner validation inside each partition: a float in (0, 1) is a holdout fraction, an int
        a shuffled (unstratified, data-independent) K-fold, a splitter is used as given.
    inner_epsilon : {"same", "scaled"} or float
        Privacy parameter of the partition fits, which never enters the privacy bound:
        ``"same"`` keeps the returned model's epsilons (``epsilons``), ``"scaled"`` multiplies
        those by ``n / partition_train_size``, a float sets their total (``inf``: non-private
        fits).
    inner_params : {"scaled", "same"}, default="scaled"
        ``"scaled"`` multiplies the parameters whose meaning depends on the number of rows
        (diffprivlib ``LogisticRegression``'s ``C``) by ``n / partition_train_size``, so that a
        partition model is regularised like the returned model; ``"same"`` keeps them. With
        ``inner_epsilon="scaled"`` too, the batched fits of diffprivlib's
        ``LogisticRegression`` (alone or after data-independent steps) are the returned model
        in miniature (:mod:`._batched`); those of a pipeline with a DP scaler take the
        one-by-one fits' settings (:func:`~._batched_runs.unit_utilities`).
    epsilons : float or dict, default=1.0
        How the returned model's DP epsilons are set (:func:`~._fit.fit_settings`): a factor
        on the estimator's, or ``{"epsilon_total": eps, "n_classes": k}`` (budget mode: each
        candidate priced at ``eps``).
    n_jobs, pre_dispatch : joblib parameters.
    error_score : float or "raise"
        Utility of a failed fit or score.
    seeds : SeedPlan
        Seeds of the partition permutation, the inner splits and the (seeded) fits.
    padding : Padding or None
        Public rows appended to every fit (classifiers).
    """

    def __init__(self, estimator, scorer, *, n_partitions, cv, inner_epsilon, n_jobs,
                 pre_dispatch, error_score, seeds, padding=None, inner_params="scaled",
                 epsilons=1.0, batched=True):
        self.estimator = estimator
        self.scorer = scorer
        self.n_partitions = n_partitions
        self.cv = cv
        self.inner_epsilon = inner_epsilon
        self.inner_params = inner_params
        self.epsilons = epsilons
        self.n_jobs = n_jobs
        self.pre_dispatch = pre_dispatch
        self.error_score = error_score
        self.seeds = seeds
        self.padding = padding
        self.batched = batched

    def _evaluate_batched(self, views, failures, templates, candidates, n_parts, n_samples,
                          n_jobs, error_score, score_params, progress):
        """:meth:`evaluate_partitions` by batched solves (:func:`_candidates_utilities`), the
        candidates of each view in groups; one ``Parallel`` call for all. A partition's utility
        is the mean over its units, the failed ones (``failures``) at ``error_score``."""
        settings = (self.inner_epsilon, self.inner_params, self.epsilons)
        # the units, hence the tasks below, follow the rows under a user's splitter (and the
        # views under a step whose output width the rows decide): progress counts this instead
        public_total = max(1, min(n_parts, 4 * effective_n_jobs(n_jobs)))
        tasks = []
        for members, X_view, y_view, units, padding, padded in views:
            X_sent, y_sent = for_workers(X_view, n_jobs), for_workers(y_view, n_jobs)
            if scaled_model(templates[members[0]]) is not None:
                # unit by unit, every unit's candidates solved together (a solve's rounding
                # depends on the problems it holds), a task the units of a chunk of partitions:
                # the utilities are the same whatever n_jobs, the tasks fixed by k and n_jobs
                owners = np.array([j for j, _, _, _ in units], dtype=np.int64)
                tasks += [(members, X_sent, y_sent,
                           [unit for unit, mine in zip(units, np.isin(owners, chunk),
                                                       strict=True) if mine],
                           padding, padded)
                          for chunk in np.array_split(np.arange(n_parts), public_total)]
                continue
            rows = sum(len(train) + (len(padding) if padding else 0)
                       for _, _, train, _ in units)
            groups = _candidate_groups(len(members), rows * (X_view.shape[1] + 1) * 8,
                                       effective_n_jobs(n_jobs),
                                       [candidates[i] for i in members])
            tasks += [(members[group], X_sent, y_sent, units, padding, padded)
                      for group in groups]
        with single_threaded_blas():
            blocks = run_tasks(
                (delayed(_candidates_utilities)(
                    [(i, templates[i]) for i in group], X_sent, y_sent, n_parts, units,
                    self.scorer, padding, error_score, self.seeds, settings, n_samples,
                    score_params, padded, [candidate_key(candidates[i]) for i in group],
                 )
                 for group, X_sent, y_sent, units, padding, padded in tasks),
                n_jobs=n_jobs, pre_dispatch=self.pre_dispatch, progress=progress,
                public_total=public_total,
            )
        totals = np.zeros((len(templates), n_parts))
        counts = np.zeros((len(templates), n_parts))
        for (group, *_), (sums, units_per_part) in zip(tasks, blocks, strict=True):
            totals[group] += sums
            counts[group] += units_per_part
        for members, partitions in failures:
            failed = np.bincount(partitions, minlength=n_parts)
            totals[members] += float(error_score) * failed
            counts[members] += failed
        out = np.full((len(templates), n_parts), float(error_score))
        scored = counts > 0
        out[scored] = totals[scored] / counts[scored]
        return out

    def _scaled_units(self, templates, y, score_params) -> bool:
        """Whether the partition fits go unit by unit through the runs' solver
        (:func:`~._batched_runs.unit_utilities`): every candidate a pipeline with a DP scaler
        before its model (:func:`~._batched.scaled_model`) whose ``tol`` the batched runs
        accept (:func:`~._batched.tight_models`), the accuracy scorer without metadata, and
        ``y`` a ``numpy`` array. Public: the configuration and the type of ``y``."""
        return (is_accuracy(self.scorer) and not score_params and isinstance(y, np.ndarray)
                and all(scaled_model(t) is not None for t in templates)
                and tight_models(templates))

    @property
    def sensitivity(self) -> float:
        """Replace-one sensitivity of each aggregated utility: ``1 / k``."""
        return 1.0 / self.n_partitions

    def partitions(self, n_samples: int) -> list[np.ndarray]:
        """The data-independent partitions of ``range(n_samples)``."""
        return make_partitions(n_samples, self.n_partitions, self.seeds.rng("partition"))

    def evaluate(self, X, y, candidates, fit_params, split_params=None,
                 score_params=None, progress=None) -> np.ndarray:
        """Exact aggregated utilities, shape ``(len(candidates),)``. PRIVATE: do not store.

        ``split_params`` (``groups``; row-aligned) go to a user's inner splitter only,
        ``score_params`` (e.g. ``sample_weight``; row-aligned) to the scorer only, each
        restricted to the rows of the partition (the validation rows, for the scorer).
        ``progress(done, total)`` hears of each finished joblib task (a public count).
        """
        return self.evaluate_partitions(X, y, candidates, fit_params, split_params,
                                        score_params, progress).mean(axis=1)

    def evaluate_partitions(self, X, y, candidates, fit_params, split_params=None,
                            score_params=None, progress=None) -> np.ndarray:
        """Exact utilities per (candidate, partition), shape ``(len(candidates), k)``. PRIVATE."""
        n_samples = _num_samples(X)
        # a failure's utility: error_score, NaN as the minimum (scikit-learn ranks it last)
        error_score = (self.error_score if self.error_score == "raise"
                       else failure_utility(self.error_score))
        parts = self.partitions(n_samples)
        templates = candidate_templates(self.estimator, candidates)
        n_jobs = private_n_jobs(self.n_jobs)
        settings = (self.inner_epsilon, self.inner_params, self.epsilons)
        # a plain model's numeric DataFrame as the float array its fit makes of it, where the
        # utility is the accuracy computed from the coefficients (a user's scorer gets the
        # frame, as one by one; the partition models are never released)
        X_rows = plain_model_rows(templates, X)[0] if is_accuracy(self.scorer) else X
        scaled = self._scaled_units(templates, y, score_params)
        # (the statistics fits are a regressor's: no padding rows)
        if self.batched and supports_batched_fits(templates, X_rows, fit_params, error_score,
                                                  pipelines=True, scaled=scaled,
                                                  statistics=self.padding is None):
            units = _fit_units(parts, self.cv, y, self.seeds, split_params)
            # a user's splitter may give a unit no train or no validation rows: its fits or
            # scores fail one by one, so every candidate's does (error_score), that unit alone
            empty = np.array([j for j, _, train, test in units if not (len(train) and len(test))],
                             dtype=np.int64)
            units = [unit for unit in units if len(unit[2]) and len(unit[3])]
            batched = (([(np.arange(len(templates)), X_rows, y, units, self.padding, 0)], [])
                       if scaled else _unit_views(templates, candidates, X_rows, y, units,
                                                  self.padding, score_params))
            if batched is not None:
                views, failures = batched
                if len(empty):
                    failures = [*failures, (np.arange(len(templates)), empty)]
                return self._evaluate_batched(views, failures, templates, candidates,
                                              len(parts), n_samples, n_jobs, error_score,
                                              score_params, progress)
        n_chunks = min(len(parts), 4 * effective_n_jobs(n_jobs))
        chunks = np.array_split(np.arange(len(parts)), n_chunks)
        X_sent, y_sent = for_workers(X, n_jobs), for_workers(y, n_jobs)
        # GaussianNB's fits of a chunk together (public: the configuration, the containers;
        # skdptune's own inner splits only, which a partition's seed decides -- a user's
        # splitter may keep a state between calls, and the one-by-one fits call it per
        # candidate)
        naive_bayes = (frozenset(i for i, template in enumerate(templates)
                                 if batched_naive_bayes(template, X, y, self.padding,
                                                        self.scorer))
                       if self.batched and not (fit_params or score_params or split_params)
                       and isinstance(self.cv, numbers.Real) and error_score != "raise"
                       else frozenset())
        with single_threaded_blas():
            blocks = run_tasks(
                (delayed(_chunk_utilities)(
                    templates, X_sent, y_sent, chunk, parts, self.scorer, self.cv, self.padding,
                    fit_params, error_score, self.seeds, settings, n_samples, split_params,
                    score_params, naive_bayes,
                 )
                 for chunk in chunks),
                n_jobs=n_jobs, pre_dispatch=self.pre_dispatch, progress=progress,
            )
        return np.hstack(blocks)
