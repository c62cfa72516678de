"""Can one released diffprivlib tree give away numpy's global generator, and then its empty leaves?

diffprivlib's ``DecisionTreeClassifier`` with ``random_state=None`` draws its structure (the
feature of every split with ``randint``, its threshold with ``uniform``) *and* the class of
every empty leaf from numpy's global Mersenne Twister; only the non-empty leaves'
PermuteAndFlip draws come from ``secrets``. The structure is released, so the attacker reads
the generator's outputs off it; the Mersenne Twister is linear over GF(2) in its 19,968 state
bits, so enough known output bits give the state, the draws that follow the structure, and so
the class every *empty* leaf received. A leaf whose class equals the predicted draw is then
very likely empty -- and whether a leaf is empty can depend on one record.

The attacker here sees only the fitted model (``tree_.feature``, ``tree_.threshold``,
``tree_.value``, ``tree_.children_left``) and the public ``bounds``, ``classes`` and
``max_depth``. The victim seeds the global generator with a seed the attacker never sees and
consumes a secret number of its outputs before the fit ("arbitrary prior use"). The attack:

1. every internal node (in node-id order, the order of the draws) used one 32-bit output for
   its feature (``randint(n_features)``: with a power-of-two ``n_features``, its low bits are
   the feature) and two for its threshold (``uniform``: the 53-bit double ``u`` is recovered
   from the threshold and the node's public bounds up to float rounding; only the bits every
   consistent ``u`` shares are used);
2. the unknowns are the 624 untempered words that the generator outputs next, whatever its
   position in its block; each known output bit is a GF(2)-linear equation in them. The
   first 624 outputs pin their own words up to their unknown bits, the later ones give
   equations in those bits, solved by Gaussian elimination on bit-packed ``uint64`` rows;
3. the recovered words predict the stream after the structure, hence the sequence of
   ``randint(n_classes)`` draws the empty leaves consume in node-id order;
4. *blind*: a forward-backward pass over the leaves (hidden state: how many empty leaves came
   before) gives each leaf's probability of being empty; *neighbouring datasets*: an attacker
   who knows every record but the target's and the two candidates for it (replace-one) checks
   which of the two empty-leaf sets the leaves' classes agree with.

The experimenter checks the attacker's results against the truth (the generator's state
before the fit, which the attacker never uses).

Run: ``python -m benchmarks.tree_rng_recovery [--quick]``; writes
``benchmarks/results/tree_rng.md`` (``tree_rng_quick.md`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import math
import secrets
import time
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from diffprivlib.accountant import BudgetAccountant
from diffprivlib.models import DecisionTreeClassifier

from benchmarks._common import markdown_table, write_result

BLIND_CLASSES = (2, 10)  # randint(10) rejects 6 of 16 masked draws: the prediction copes
N_WORDS = 624  # Mersenne Twister state words
STATE_BITS = 19937  # the period's exponent: the bits the outputs depend on
MASK32 = 0xFFFFFFFF
MATRIX_A = 0x9908B0DF
UPPER = 0x80000000
LOWER = 0x7FFFFFFF
U_BITS = 53  # bits of RandomState.uniform's double: 27 of one output, then 26 of the next


# --- the Mersenne Twister, concretely and as GF(2)-linear maps ---------------------------------

def temper(x: int) -> int:
    y = x ^ (x >> 11)
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    return (y ^ (y >> 18)) & MASK32


def untemper(y: int) -> int:
    y ^= y >> 18
    y ^= (y << 15) & 0xEFC60000
    x = y
    for _ in range(5):
        x = (y ^ ((x << 7) & 0x9D2C5680)) & MASK32
    y = x
    for _ in range(3):
        x = y ^ (x >> 11)
    return x & MASK32


def extend_words(words: list[int], n: int) -> list[int]:
    """The untempered words ``0..n-1`` of the stream whose first 624 are ``words``."""
    x = list(words)
    while len(x) < n:
        p = len(x)
        v = (x[p - N_WORDS] & UPPER) | (x[p - N_WORDS + 1] & LOWER)
        x.append(x[p - N_WORDS + 397] ^ (v >> 1) ^ (MATRIX_A if v & 1 else 0))
    return x


def random_state_at(words: list[int], start: int) -> np.random.RandomState:
    """A ``RandomState`` whose next output is the tempered word ``start`` of the stream."""
    key = np.array(extend_words(words, start + N_WORDS)[start:start + N_WORDS], dtype=np.uint32)
    rs = np.random.RandomState()
    rs.set_state(("MT19937", key, 0, 0, 0.0))
    return rs


def _matrix(f) -> list[int]:
    """Rows of the 32x32 GF(2) matrix of the linear map ``f``: row ``j`` as a bit mask over
    the input bits that output bit ``j`` is the XOR of."""
    columns = [f(1 << i) for i in range(32)]
    return [sum(((columns[i] >> j) & 1) << i for i in range(32)) for j in range(32)]


TEMPER_ROWS = _matrix(temper)
UNTEMPER_ROWS = _matrix(untemper)


# --- what the released tree reveals -----------------------------------------------------------

@dataclass
class Observation:
    """Known bits (``mask``) with their values of the tempered output at ``position``."""
    position: int
    mask: int
    value: int


def threshold_bits(threshold: float, lower: float, upper: float) -> tuple[int, int]:
    """(mask, value) of the bits of ``k`` (``u = k / 2**53``) that every ``k`` consistent
    with ``threshold = lower + (upper - lower) * u`` shares. The tolerance covers the two
    roundings (or one fused multiply-add) of numpy's ``lower + range * u``."""
    span = upper - lower
    tol = Fraction(2 * math.ulp(max(abs(threshold), abs(lower), abs(threshold - lower))))
    scale = Fraction(2 ** U_BITS) / Fraction(span)
    k_lo = max(0, math.ceil((Fraction(threshold) - tol - Fraction(lower)) * scale))
    k_hi = min(2 ** U_BITS - 1, math.floor((Fraction(threshold) + tol - Fraction(lower)) * scale))
    known = U_BITS - (k_lo ^ k_hi).bit_length()
    mask = ((1 << known) - 1) << (U_BITS - known)
    return mask, k_lo & mask


def observations(tree, bounds, n_features: int) -> tuple[list[Observation], int]:
    """The known output bits read off a fitted tree, and the number of outputs its
    structure consumed. Internal nodes are numbered in the order they drew."""
    if n_features < 2 or n_features & (n_features - 1):
        raise ValueError("the attack as written needs a power-of-two number of features "
                         "(randint then never rejects, so every draw is one output)")
    feature_mask = n_features - 1
    t = tree.tree_
    lower = {0: np.asarray(bounds[0], dtype=float)}
    upper = {0: np.asarray(bounds[1], dtype=float)}
    obs, position = [], 0
    for node in range(t.node_count):
        left, right = t.children_left[node], t.children_right[node]
        if left == -1:
            continue
        f, thr = int(t.feature[node]), float(t.threshold[node])
        obs.append(Observation(position, feature_mask, f))
        mask, k = threshold_bits(thr, float(lower[node][f]), float(upper[node][f]))
        obs.append(Observation(position + 1, (mask >> 26) << 5, (k >> 26) << 5))
        low26 = (1 << 26) - 1
        obs.append(Observation(position + 2, (mask & low26) << 6, (k & low26) << 6))
        position += 3
        lower[left], upper[left] = lower[node], upper[node].copy()
        upper[left][f] = thr
        lower[right], upper[right] = lower[node].copy(), upper[node]
        lower[right][f] = thr
    return obs, position


# --- solving for the state --------------------------------------------------------------------

def _parity(x: int) -> int:
    return bin(x).count("1") & 1


@dataclass
class Recovery:
    """The solutions for the 624 untempered words at the fit's start (the first with every
    undetermined unknown at 0, the others with them at random), and the system's size."""
    solutions: list[list[int]]
    n_unknowns: int
    n_equations: int
    rank: int
    known_bits: int
    seconds: float


def recover_words(obs: list[Observation], n_solutions: int = 24, seed: int = 0) -> Recovery:
    """Solve for the 624 words the generator output first, from known output bits."""
    start = time.perf_counter()
    by_position = {o.position: o for o in obs}
    # unknowns: the unknown bits of the first 624 tempered outputs
    variables, n_var = {}, 0
    for p in range(N_WORDS):
        mask = by_position[p].mask if p in by_position else 0
        for j in range(32):
            if not (mask >> j) & 1:
                variables[(p, j)] = n_var
                n_var += 1
    one = 1 << n_var  # the constant term's bit in every affine form

    def known(p, j):
        o = by_position.get(p)
        return o is not None and (o.mask >> j) & 1

    def y_bits(p):
        return [(one if (by_position[p].value >> j) & 1 else 0) if known(p, j)
                else 1 << variables[(p, j)] for j in range(32)]

    def apply(rows, bits):
        out = []
        for row in rows:
            acc = 0
            for i in range(32):
                if (row >> i) & 1:
                    acc ^= bits[i]
            out.append(acc)
        return out

    x = [apply(UNTEMPER_ROWS, y_bits(p)) for p in range(N_WORDS)]
    n_outputs = max(o.position for o in obs) + 1
    equations = []
    for p in range(N_WORDS, n_outputs):
        a, b, c = x[p - N_WORDS], x[p - N_WORDS + 1], x[p - N_WORDS + 397]
        v = b[:31] + [a[31]]  # the low 31 bits of word p-623, the top bit of word p-624
        x.append([c[i] ^ (v[i + 1] if i < 31 else 0) ^ (v[0] if (MATRIX_A >> i) & 1 else 0)
                  for i in range(32)])
        o = by_position.get(p)
        if o is None or not o.mask:
            continue
        y = apply(TEMPER_ROWS, x[p])
        equations += [y[j] ^ (one if (o.value >> j) & 1 else 0)
                      for j in range(32) if (o.mask >> j) & 1]
    known_bits = sum(bin(o.mask).count("1") for o in obs)
    solutions, rank = _solve_gf2(equations, n_var, n_solutions, np.random.default_rng(seed))
    words = []
    for solution in solutions:
        words.append([untemper(sum(
            ((by_position[p].value >> j) & 1 if known(p, j)
             else (solution >> variables[(p, j)]) & 1) << j for j in range(32)))
            for p in range(N_WORDS)])
    return Recovery(words, n_var, len(equations), rank, known_bits, time.perf_counter() - start)


def _solve_gf2(equations: list[int], n_var: int, n_solutions: int,
               rng: np.random.Generator) -> tuple[list[int], int]:
    """Solutions of the affine equations (bit ``n_var`` of each is its right-hand side) as bit
    masks -- the first with the free unknowns at 0, the others with them at random -- and
    the rank; no solution if the system is inconsistent."""
    if not equations:
        return [], 0
    n_words = (n_var + 1 + 63) // 64
    m = np.frombuffer(b"".join(e.to_bytes(8 * n_words, "little") for e in equations),
                      dtype="<u8").reshape(len(equations), n_words).copy()
    active = np.ones(len(m), dtype=bool)
    pivots = []
    for c in range(n_var):
        w, b = divmod(c, 64)
        hits = np.flatnonzero(((m[:, w] >> np.uint64(b)) & np.uint64(1)).astype(bool) & active)
        if not hits.size:
            continue
        p = hits[0]
        active[p] = False
        if hits.size > 1:
            m[hits[1:], w:] ^= m[p, w:]
        pivots.append((c, p))
    rhs_w, rhs_b = divmod(n_var, 64)
    rhs = (m[:, rhs_w] >> np.uint64(rhs_b)) & np.uint64(1)
    if np.any(rhs[active]):  # a row without pivot is 0 = 1
        return [], len(pivots)
    m[:, rhs_w] &= ~(np.uint64(1) << np.uint64(rhs_b))
    pivot_mask = np.zeros(n_words, dtype=np.uint64)
    for c, _ in pivots:
        pivot_mask[c // 64] |= np.uint64(1) << np.uint64(c % 64)
    solutions = []
    for s in range(n_solutions):
        free = rng.integers(0, 2**63, size=n_words, dtype=np.uint64) * np.uint64(2)
        free ^= rng.integers(0, 2, size=n_words, dtype=np.uint64)
        solution = np.zeros(n_words, dtype=np.uint64) if s == 0 else free & ~pivot_mask
        solution[rhs_w] &= (np.uint64(1) << np.uint64(rhs_b)) - np.uint64(1)
        for c, p in reversed(pivots):
            bit = int(rhs[p]) ^ _parity(int(np.bitwise_xor.reduce(m[p] & solution)))
            if bit:
                solution[c // 64] |= np.uint64(1) << np.uint64(c % 64)
        solutions.append(int.from_bytes(solution.astype("<u8").tobytes(), "little"))
    return solutions, len(pivots)


# --- from the predicted stream to the empty leaves --------------------------------------------

def predicted_draws(recovery: Recovery, n_structure: int, n_leaves: int,
                    n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``randint(n_classes)`` draws after the structure (the empty leaves take them in
    node-id order) and whether every solution agrees on each (a draw the known bits do not
    determine differs between solutions with probability 1/2 or more)."""
    draws = np.array([[rs.randint(n_classes) for _ in range(n_leaves)]
                      for rs in (random_state_at(w, n_structure) for w in recovery.solutions)])
    return draws[0], np.all(draws == draws[0], axis=0)


def leaves_and_classes(tree) -> tuple[np.ndarray, np.ndarray]:
    t = tree.tree_
    leaves = np.flatnonzero(t.children_left == -1)
    return leaves, np.argmax(t.value[leaves, 0, :], axis=1)


def posterior_empty(classes: np.ndarray, draws: np.ndarray, determined: np.ndarray,
                    n_classes: int, prior: float = 0.5) -> np.ndarray:
    """P(leaf empty | its class and every other leaf's), by forward-backward over the leaves
    in node-id order; the hidden state is the number of empty leaves before. An empty leaf
    shows the next predicted draw; a non-empty one any class (1/n_classes: its noisy majority
    is unknown to the attacker)."""
    m = len(classes)
    # match[i, j]: leaf i shows draw j (an undetermined draw explains any class at chance)
    match = np.where(determined[None, :], classes[:, None] == draws[None, :], 1.0 / n_classes)
    stay, move = (1 - prior) / n_classes, prior * match
    alpha = np.zeros((m + 1, m + 1))
    alpha[0, 0] = 1.0
    for i in range(m):
        alpha[i + 1] = alpha[i] * stay
        alpha[i + 1, 1:] += alpha[i, :-1] * move[i, :m]
        alpha[i + 1] /= alpha[i + 1].sum()
    beta = np.ones(m + 1)
    posterior = np.zeros(m)
    for i in range(m - 1, -1, -1):
        empty = np.zeros(m + 1)
        empty[:-1] = alpha[i, :-1] * move[i, :m] * beta[1:]
        full = alpha[i] * stay * beta
        posterior[i] = empty.sum() / (empty.sum() + full.sum())
        beta_new = stay * beta
        beta_new[:-1] += move[i, :m] * beta[1:]
        beta = beta_new / beta_new.sum()
    return posterior


def blind_posterior(classes: np.ndarray, draws: np.ndarray, determined: np.ndarray,
                    n_classes: int, iterations: int = 10) -> np.ndarray:
    """:func:`posterior_empty` with the prior fraction of empty leaves estimated from the
    tree itself (expectation-maximisation from 1/2)."""
    prior = 0.5
    for _ in range(iterations):
        posterior = posterior_empty(classes, draws, determined, n_classes, prior)
        prior = float(np.clip(posterior.mean(), 0.01, 0.99))
    return posterior


def consistent(classes: np.ndarray, empty: np.ndarray, draws: np.ndarray,
               determined: np.ndarray) -> bool:
    """Do the leaves a hypothesis calls empty show the predicted draws, in order?"""
    shown = classes[empty]
    return bool(np.all((shown == draws[:len(shown)]) | ~determined[:len(shown)]))


# --- the experiment ---------------------------------------------------------------------------

def make_data(n: int, n_features: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Public rows in [0, 1]^d: four clusters, labels from a noisy linear rule."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.3, 0.7, size=(4, n_features))
    X = np.clip(centres[rng.integers(4, size=n)] + rng.normal(0, 0.08, (n, n_features)), 0, 1)
    y = (X @ rng.normal(size=n_features) + rng.normal(0, 0.1, n) > 0).astype(int)
    return X, y


def victim_fit(X, y, depth: int, n_features: int, prior_use: bool, n_classes: int = 2) -> tuple:
    """The victim's fit, the global generator seeded with a secret and (``prior_use``) used a
    secret number of times before; also the experimenter's copy of the generator's state."""
    # the global generator is the subject here
    np.random.seed(secrets.randbits(32))  # noqa: NPY002
    if prior_use:
        np.random.random(size=secrets.randbelow(5000))  # noqa: NPY002
        np.random.randint(1000, size=secrets.randbelow(1000))  # noqa: NPY002
    state = np.random.get_state()  # noqa: NPY002
    bounds = (np.zeros(n_features), np.ones(n_features))
    model = DecisionTreeClassifier(max_depth=depth, bounds=bounds, classes=np.arange(n_classes),
                                   epsilon=1.0, accountant=BudgetAccountant())
    model.fit(X, y)
    return model, bounds, state


def true_draws(state, n_structure: int, n_leaves: int, n_classes: int) -> np.ndarray:
    rs = np.random.RandomState()
    rs.set_state(state)
    rs.randint(0, 2**32, size=n_structure, dtype=np.uint64)  # one output each
    return np.array([rs.randint(n_classes) for _ in range(n_leaves)])


def rank_row(depth: int, n_features: int, seed: int) -> list:
    """One fit: known bits, rank, and whether the determined draws are all right."""
    X, y = make_data(200, n_features, seed)
    model, bounds, state = victim_fit(X, y, depth, n_features, prior_use=True)
    obs, n_structure = observations(model, bounds, n_features)
    rec = recover_words(obs)
    leaves, _ = leaves_and_classes(model)
    if not rec.solutions:
        return [depth, n_features, n_structure, rec.known_bits, rec.rank, "no solution", "", ""]
    draws, determined = predicted_draws(rec, n_structure, len(leaves), 2)
    right = draws == true_draws(state, n_structure, len(leaves), 2)
    return [depth, n_features, n_structure, rec.known_bits,
            f"{rec.rank} / {rec.n_unknowns}", f"{determined.mean():.3f}",
            f"{right[determined].mean():.3f}" if determined.any() else "-",
            f"{rec.seconds:.1f}"]


@dataclass
class Trial:
    recovered: bool
    determined: float  # fraction of predicted draws all solutions agree on
    draws_right: float  # fraction of those equal to the true draws (the experimenter's check)
    seconds: float  # the attacker's time: observations, solving, predicting
    n_classes: int = 2
    world: str = ""  # neighbours: "D" (the target x in the data) or "D'" (x replaced by x')
    says: str = ""  # neighbours: "D", "D'" or "?" (both or neither hypothesis consistent)
    blind_accuracy: float = float("nan")  # blind: leaves classified empty/non-empty rightly
    base_rate: float = float("nan")  # blind: fraction of leaves that are empty


def attack(X, y, depth: int, n_features: int, n_classes: int = 2):
    """The victim's fit on (X, y), then the attacker's recovery from the model alone."""
    model, bounds, state = victim_fit(X, y, depth, n_features, True, n_classes)
    start = time.perf_counter()
    obs, n_structure = observations(model, bounds, n_features)
    rec = recover_words(obs)
    leaves, classes = leaves_and_classes(model)
    draws = determined = None
    if rec.solutions:
        draws, determined = predicted_draws(rec, n_structure, len(leaves), n_classes)
    seconds = time.perf_counter() - start
    if draws is None:
        return None, Trial(False, 0.0, float("nan"), seconds)
    right = draws == true_draws(state, n_structure, len(leaves), n_classes)  # experimenter
    result = Trial(True, float(determined.mean()), float(right[determined].mean()), seconds)
    return (model, leaves, classes, draws, determined), result


def neighbours_trial(world: str, X_public, y_public, x_in, x_out, depth, n_features) -> Trial:
    """A fit on D = public + (x_in, 1) or D' = public + (x_out, 1); the attacker knows the
    public rows and both candidates, and says which empty-leaf set the classes agree with."""
    target = x_in if world == "D" else x_out
    seen, result = attack(np.vstack([X_public, target]), np.append(y_public, 1), depth,
                          n_features)
    result.world = world
    if seen is None:
        result.says = "?"
        return result
    model, leaves, classes, draws, determined = seen
    occupied_by_public = np.isin(leaves, model.apply(X_public))
    says = [name for name, x in (("D", x_in), ("D'", x_out))
            if consistent(classes, ~(occupied_by_public | (leaves == model.apply(x[None])[0])),
                          draws, determined)]
    result.says = says[0] if len(says) == 1 else "?"
    return result


def blind_trial(X, y, depth, n_features, n_classes) -> Trial:
    """A fit on (X, y); the attacker knows no row and calls each leaf empty or not."""
    seen, result = attack(X, y, depth, n_features, n_classes)
    result.n_classes = n_classes
    if seen is not None:
        model, leaves, classes, draws, determined = seen
        posterior = blind_posterior(classes, draws, determined, n_classes)
        truly_empty = ~np.isin(leaves, model.apply(X))  # experimenter only
        result.blind_accuracy = float(np.mean((posterior > 0.5) == truly_empty))
        result.base_rate = float(truly_empty.mean())
    return result


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    from scipy.stats import beta

    lo = beta.ppf(alpha / 2, k, n - k + 1) if k else 0.0
    hi = beta.ppf(1 - alpha / 2, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke run: few fits")
    p.add_argument("--trials", type=int, default=None, help="fits per world (D and D')")
    p.add_argument("--data", help="ignored (the runner's common option)")
    return p


def main(argv=None) -> None:
    args = parser().parse_args(argv)
    warnings.simplefilter("ignore")
    quick = args.quick
    n_trials = args.trials or (2 if quick else 100)
    n_blind_trials = 1 if quick else 10
    depth, n_features, n_public, n_blind = 10, 16, 1000, 3000
    start = time.perf_counter()

    ranks = [rank_row(d, f, seed) for d, f in ([(8, 16), (9, 16), (10, 16)] if quick else
                                               [(8, 64), (9, 8), (9, 16), (9, 32), (9, 64),
                                                (10, 2), (10, 16)])
             for seed in range(1 if quick else 2)]

    X_public, y_public = make_data(n_public, n_features, seed=0)
    x_in = np.full(n_features, 0.98)  # an outlier: its leaf rarely holds a public row
    x_out = X_public[0]  # a copy of a public row: its leaf is occupied anyway
    trials = [neighbours_trial(world, X_public, y_public, x_in, x_out, depth, n_features)
              for _ in range(n_trials) for world in ("D", "D'")]
    rng = np.random.default_rng(1)
    X_blind = rng.random((n_blind, n_features))
    noisy = X_blind[:, 0] + 0.2 * rng.normal(size=n_blind)
    blind = [blind_trial(X_blind, np.clip(noisy * k, 0, k - 1).astype(int), depth, n_features, k)
             for k in BLIND_CLASSES for _ in range(n_blind_trials)]
    write_result("tree_rng_quick" if quick else "tree_rng",
                 markdown(ranks, trials, blind, depth, n_features, n_public, n_blind,
                          time.perf_counter() - start))


def _mean(values, fmt=".3f") -> str:
    values = [v for v in values if not math.isnan(v)]
    return format(float(np.mean(values)), fmt) if values else "-"


def markdown(ranks, trials, blind, depth, n_features, n_public, n_blind, seconds) -> str:
    every = [t for t in trials + blind if t.recovered]
    in_d = [t for t in trials if t.world == "D"]
    in_d2 = [t for t in trials if t.world == "D'"]
    says_d2_in_d2 = sum(t.says == "D'" for t in in_d2)
    says_d2_in_d = sum(t.says == "D'" for t in in_d)
    lo, _ = clopper_pearson(says_d2_in_d2, len(in_d2))
    _, hi = clopper_pearson(says_d2_in_d, len(in_d))
    eps_lb = math.log(lo / hi) if lo > 0 else float("nan")
    return "\n".join([
        "# Recovering numpy's global generator from one diffprivlib tree",
        "",
        "`python -m benchmarks.tree_rng_recovery`: diffprivlib `DecisionTreeClassifier` with "
        "`random_state=None`, epsilon = 1, public bounds [0, 1]^d, classes [0, 1]; before "
        "each fit the global generator is seeded with a secret and used a secret number of "
        "times. The attacker sees the fitted model and the public parameters only. "
        f"Run time {seconds:.0f} s.",
        "",
        "## How much of the tree it takes (one fit per row)",
        "",
        "Known bits: the output bits read off the structure (the features' low bits, the "
        "bits every threshold-consistent `u` shares). Rank: of the GF(2) system in the "
        "unknown bits of the first 624 outputs (full rank is not needed: the low 31 bits "
        "of the first word never influence a later output). Determined: the fraction of "
        "the 2^depth predicted empty-leaf draws on which 24 solutions of the system agree "
        "(what the attacker relies on: a draw the known bits leave open passes with "
        "probability 2^-23); right: of those, the fraction equal to the true draw (the "
        "experimenter's check). Seconds: building and solving the system.",
        "",
        markdown_table(["depth", "features", "outputs used", "known bits", "rank / unknowns",
                        "determined", "right", "seconds"], ranks),
        "",
        f"## The empty leaves (depth {depth}, {n_features} features)",
        "",
        f"Neighbours: {n_public} public rows in four clusters plus the target row, an outlier "
        "x (data D) or a copy of a public row x' (data D', replace-one); the attacker knows "
        "the public rows and both candidates and says D' when the leaves' classes agree "
        "with the predicted draws only under D' (the outlier's leaf empty). Blind: "
        f"{n_blind} uniform rows the attacker does not know; each leaf is called empty when "
        "its forward-backward posterior exceeds 1/2.",
        "",
        markdown_table(["quantity", "value"], [
            ["fits (state recovered)", f"{len(trials) + len(blind)} ({len(every)})"],
            ["attacker's time per tree, s (median)",
             f"{np.median([t.seconds for t in every]):.1f}" if every else "-"],
            ["predicted empty-leaf draws determined (mean)",
             _mean([t.determined for t in every])],
            ["determined draws equal to the true ones (mean)",
             _mean([t.draws_right for t in every], ".4f")],
            ["neighbours: says D' when the data is D'", f"{says_d2_in_d2} / {len(in_d2)}"],
            ["neighbours: says D' when the data is D", f"{says_d2_in_d} / {len(in_d)}"],
            ["neighbours: undecided (both or neither consistent)",
             f"{sum(t.says == '?' for t in trials)} / {len(trials)}"],
            ["neighbours: epsilon lower bound, 95 % (Clopper-Pearson; <= 0 says nothing)",
             f"{eps_lb:.2f}" if not math.isnan(eps_lb) else "-"],
            *[row for k in BLIND_CLASSES for row in (
                [f"blind, {k} classes: leaves called empty/non-empty rightly (mean)",
                 _mean([t.blind_accuracy for t in blind if t.n_classes == k])],
                [f"blind, {k} classes: fraction of leaves empty (the majority guess scores "
                 "max(p, 1-p))", _mean([t.base_rate for t in blind if t.n_classes == k])])],
        ]),
        "",
    ])


if __name__ == "__main__":
    main()
