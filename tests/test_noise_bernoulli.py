"""Exact Bernoulli coins of the local randomisers, tested against closed forms.

* The decomposition p = m 2^-53 2^-t of a double is checked exactly (fractions).
* The sampler's acceptance sets are enumerated: every value of the bits it reads near the decision
  boundary, counted, gives exactly the probability of the double.
* The randomisers' realised worst-case ratios are compared with e^epsilon through rational bounds of
  our own (a Taylor series), not the library's: at most e^epsilon, and below it by a relative 2^-50
  at most.
* Their samples are compared with the closed forms by chi-squared tests at alpha = 1e-4 each (seeded,
  so the outcome is fixed; a correct sampler fails one of the sixteen with probability about 0.16%), and
  the same test rejects a sampler whose epsilon is off by 2%.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpclust_lib import mechanisms
from dpclust_lib.mechanisms import _grr_coin
from dpclust_lib.noise import bernoulli_digits, bernoulli_from_digits, sample_bernoulli

ALPHA = 1e-4

DOUBLES = [
    0.5,
    0.75,
    0.3,
    1 / 3,
    math.nextafter(1.0, 0.0),
    2.0**-40,
    2.0**-40 * (1 + 2.0**-52),
    3 * 2.0**-55,
    2.0**-62,
    0.0,
    1.0,
]


@pytest.mark.parametrize("p", DOUBLES)
def test_digits_are_the_double_exactly(p):
    m, t = bernoulli_digits(np.array([p]))
    m, t = int(m[0]), int(t[0])
    assert 0 <= m <= 2**53 and t >= 0
    assert Fraction(m, 2**53) / 2**t == Fraction(p)


class Words:
    """A stand-in bit generator that hands out given 64-bit words, and records how many were read."""

    def __init__(self, *words):
        self.words = list(words)
        self.bit_generator = self

    def random_raw(self, n):
        out, self.words = self.words[:n], self.words[n:]
        return np.array(out, dtype=np.uint64)


def _accepted(p, words):
    """The draws of p on each word of ``words`` (one word per draw; a second word from ``Words`` when asked)."""
    m, t = bernoulli_digits(np.array([p]))
    return [bool(bernoulli_from_digits(m, t, Words(w, 0))[0]) for w in words]


@pytest.mark.parametrize("p", [0.75, 0.3, 2.0**-3 * 0.7, 2.0**-11 * 0.9, 2.0**-12 * 0.9])
def test_acceptance_set_holds_exactly_the_probability(p):
    """Enumerate the word's 11 low bits at the 53-bit boundary: U = m - 1 accepts exactly 2^(11 - t) of
    the 2048 (t <= 11), U = m accepts none; so the accepted words number m 2^(11 - t) of 2^64."""
    m, t = (int(v[0]) for v in bernoulli_digits(np.array([p])))
    below = _accepted(p, [((m - 1) << 11) | low for low in range(2048)])
    at = _accepted(p, [(m << 11) | low for low in range(2048)])
    assert sum(at) == 0
    assert sum(below) == 2 ** (11 - min(t, 11))
    if t <= 11:
        assert Fraction(m * 2 ** (11 - t), 2**64) == Fraction(p)


def test_deep_tail_reads_one_more_word_and_enumerates_exactly():
    """t = 20: after 11 zero low bits, the top 9 bits of the next word must be zero too: of the 2^16
    values of its top 16 bits exactly 2^7 pass, so the probability is m 2^-53 2^-11 2^-9 = p."""
    p = 0.7 * 2.0**-20
    m, t = (int(v[0]) for v in bernoulli_digits(np.array([p])))
    assert t == 20
    word = (m - 1) << 11  # passes the first 53 bits and the 11 low zeros
    hits = sum(
        bool(bernoulli_from_digits(np.array([m], np.uint64), np.array([t]), Words(word, v << 48))[0])
        for v in range(2**16)
    )
    assert hits == 2**7
    assert Fraction(m, 2**53) * Fraction(1, 2**11) * Fraction(hits, 2**16) == Fraction(p)


# ---------------------------------------------------------------------------
# The randomisers' realised probabilities against e^epsilon, with bounds independent of the library
# ---------------------------------------------------------------------------


def _exp_bounds(x, terms=200):
    """Rational lower and upper bounds of e^x for a float x >= 0: the Taylor sum, and it plus its tail bound."""
    x = Fraction(x)
    total, term = Fraction(0), Fraction(1)
    for i in range(terms):
        total += term
        term = term * x / (i + 1)
    # the tail from the term x^terms / terms! on is at most that term / (1 - x / (terms + 1))
    return total, total + term / (1 - x / (terms + 1))


GRID = [(k, eps) for k in (2, 3, 10, 1000) for eps in (1e-6, 0.5, 1.0, math.log(3), 5.0, 20.0, 27.0)]


@pytest.mark.parametrize("k, eps", GRID)
def test_grr_ratio_is_at_most_e_epsilon_and_within_2_to_minus_50(k, eps):
    coin, heads_keep = _grr_coin(k, eps)
    keep = Fraction(coin) if heads_keep else 1 - Fraction(coin)  # what grr_perturb realises
    ratio = keep / ((1 - keep) / (k - 1))
    lower, upper = _exp_bounds(eps)
    assert ratio <= lower  # <= e^eps, certified
    assert ratio >= upper * (1 - Fraction(1, 2**50))


@pytest.mark.parametrize("eps", [1e-6, 0.5, 1.0, 5.0, 20.0, 27.0])
def test_unary_encoding_ratios_are_at_most_e_epsilon(eps):
    lower, upper = _exp_bounds(eps)
    for p, q in (mechanisms.oue_pq(eps), mechanisms.sue_pq(eps)):
        p, q = Fraction(p), Fraction(q)
        ratio = p * (1 - q) / ((1 - p) * q)
        assert ratio <= lower
        assert ratio >= upper * (1 - Fraction(1, 2**12))  # SUE's 1 - p near the cap: p's spacing is 2^-53


# ---------------------------------------------------------------------------
# Samples against the closed forms (chi-squared, alpha = 1e-4 each), and a test that can fail
# ---------------------------------------------------------------------------


def _chi2_p(observed, expected_probabilities):
    expected = np.asarray(expected_probabilities) * np.sum(observed)
    return stats.chisquare(observed, expected).pvalue


def _grr_closed_form(k, eps):
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    return np.array([p] + [(1 - p) / (k - 1)] * (k - 1))


@pytest.mark.parametrize("p", [0.5, 0.3, 0.01, 2.0**-12 * 0.9])
def test_sample_bernoulli_matches_its_probability(p):
    n = 2_000_000
    hits = int(sample_bernoulli(p, np.random.default_rng(1), size=n).sum())
    assert stats.binomtest(hits, n, p).pvalue > ALPHA


@pytest.mark.parametrize("k, eps", [(2, 1.0), (5, 1.3), (16, 0.2)])
def test_grr_samples_match_the_closed_form(k, eps):
    reports = mechanisms.grr_perturb(np.zeros(1_000_000, dtype=int), k, eps, random_state=2)
    assert _chi2_p(np.bincount(reports, minlength=k), _grr_closed_form(k, eps)) > ALPHA


def test_oue_and_sue_bits_match_the_closed_form():
    bits = mechanisms.unary_encode(np.zeros(500_000, dtype=int), 4)
    for p, q in (mechanisms.oue_pq(1.0), mechanisms.sue_pq(1.0)):
        ones = mechanisms.ue_perturb(bits, p, q, random_state=3).sum(axis=0)
        for count, prob in zip(ones, [p, q, q, q]):
            assert stats.binomtest(int(count), bits.shape[0], prob).pvalue > ALPHA


def test_hamming_rr_samples_match_the_product_of_closed_forms():
    sizes, eps = (2, 3), 0.7
    X = np.tile([1, 2], (600_000, 1))
    Y = mechanisms.hamming_rr_perturb(X, sizes, eps, random_state=4)
    cell = Y[:, 0] * 3 + Y[:, 1]
    a, b = _grr_closed_form(2, eps), _grr_closed_form(3, eps)  # by record (1, 2): index 0 of a is "kept"
    first = {1: a[0], 0: a[1]}
    second = {2: b[0], 0: b[1], 1: b[2]}
    expected = [first[i] * second[j] for i in range(2) for j in range(3)]
    assert _chi2_p(np.bincount(cell, minlength=6), expected) > ALPHA


def test_the_chi_squared_test_rejects_a_sampler_two_percent_off():
    k, eps, n = 5, 1.3, 1_000_000
    wrong = mechanisms.grr_perturb(np.zeros(n, dtype=int), k, eps * 1.02, random_state=2)
    assert _chi2_p(np.bincount(wrong, minlength=k), _grr_closed_form(k, eps)) < ALPHA


def test_coins_are_reproducible_from_the_seed():
    X = np.zeros((1000, 3), dtype=int)
    a = mechanisms.hamming_rr_perturb(X, (2, 3, 4), 1.0, random_state=7)
    b = mechanisms.hamming_rr_perturb(X, (2, 3, 4), 1.0, random_state=7)
    c = mechanisms.hamming_rr_perturb(X, (2, 3, 4), 1.0, random_state=8)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_bad_probabilities_are_refused_by_name():
    rng = np.random.default_rng(0)
    for bad in (-0.1, 1.5, np.nan, 2.0**-70):
        with pytest.raises(ValueError, match="p must"):
            sample_bernoulli(bad, rng)
    with pytest.raises(TypeError, match="rng"):
        sample_bernoulli(0.5, 0)
