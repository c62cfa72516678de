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


def recover_words(obs: list[Observation], n_solutions: int = 3, seed: int = 0) -> Recovery:
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
