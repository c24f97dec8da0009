"""The interval and verdict helpers of the ledgers, against closed forms computed by hand."""

import math

import numpy as np
import pytest

from dpclust import experiments, verdicts

T_975_DF2 = 4.302652729911275  # Student t quantile 0.975 with 2 degrees of freedom (tables)


def test_t_interval_closed_form():
    mean, low, high = experiments.t_interval([1.0, 2.0, 3.0])  # mean 2, sample sd 1
    half = T_975_DF2 / math.sqrt(3)
    assert mean == 2.0
    assert low == pytest.approx(2.0 - half, rel=1e-9) and high == pytest.approx(2.0 + half, rel=1e-9)


def test_paired_interval_is_the_interval_of_the_differences():
    mean, low, high = experiments.paired_interval([3.0, 5.0, 7.0], [2.0, 3.0, 4.0])  # differences 1, 2, 3
    half = T_975_DF2 / math.sqrt(3)
    assert (mean, low, high) == pytest.approx((2.0, 2.0 - half, 2.0 + half), rel=1e-9)


def test_welch_interval_equal_sizes_and_variances():
    # a = (1, 2, 3), b = (0, 1, 2): difference 1, standard error sqrt(1/3 + 1/3), Welch df = 4
    diff, low, high = experiments.welch_interval([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])
    half = 2.7764451051977987 * math.sqrt(2 / 3)  # t quantile 0.975 with 4 degrees of freedom
    assert (diff, low, high) == pytest.approx((1.0, 1.0 - half, 1.0 + half), rel=1e-9)


def test_one_value_gives_an_unbounded_interval():
    assert experiments.t_interval([4.0]) == (4.0, -np.inf, np.inf)


@pytest.mark.parametrize("low, high, side", [(0.1, 0.2, "above"), (-0.2, -0.1, "below"), (-0.1, 0.1, "straddles")])
def test_interval_side(low, high, side):
    assert experiments.interval_side(low, high) == side


@pytest.mark.parametrize(
    "holds, verdict",
    [([True, True], "reproduced"), ([True, False], "partly"), ([False, False], "not reproduced"), ([], "not run")],
)
def test_verdict_by_share_of_parts(holds, verdict):
    assert verdicts.verdict_by_share(holds) == verdict


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: experiments.t_interval([1.0, np.nan]), "NaN"),
        (lambda: experiments.t_interval([1.0, 2.0], level=1.5), "level"),
        (lambda: experiments.paired_interval([1.0, 2.0], [1.0]), "pair"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_format_interval():
    assert experiments.format_interval(0.0123, -0.003, 0.0271) == "+0.012 [-0.003, +0.027]"


def rcp(eug, other):
    # the relative change of Fig. 6, written here from its definition
    return (eug - other) / eug


def test_paired_bootstrap_matches_scipy_percentile_bootstrap():
    from scipy import stats

    gen = np.random.default_rng(7)
    a = gen.gamma(2.0, 1.0, size=25)
    b = a * gen.uniform(0.6, 1.1, size=25)  # paired with a: the resampling must keep the pairs together
    est, low, high = experiments.paired_bootstrap(a, b, rcp, n_boot=3_000, random_state=np.random.default_rng(11))
    ref = stats.bootstrap(
        (a, b),
        lambda x, y, axis: rcp(x.mean(axis=axis), y.mean(axis=axis)),
        paired=True,
        vectorized=True,
        n_resamples=3_000,
        method="percentile",
        random_state=np.random.default_rng(11),
    ).confidence_interval
    assert est == pytest.approx(rcp(a.mean(), b.mean()), rel=1e-12)
    assert (low, high) == pytest.approx((ref.low, ref.high), rel=1e-9)


def test_paired_bootstrap_shares_one_stream_and_refuses_unpaired_samples():
    gen = np.random.default_rng(3)
    first = experiments.paired_bootstrap([1.0, 2.0, 4.0], [1.0, 1.0, 1.0], np.subtract, n_boot=50, random_state=gen)
    again = experiments.paired_bootstrap([1.0, 2.0, 4.0], [1.0, 1.0, 1.0], np.subtract, n_boot=50, random_state=gen)
    assert first[0] == again[0] == pytest.approx(4 / 3)  # mean difference (0 + 1 + 3) / 3
    # the second interval comes from the Generator's second draw of (n_boot, n) pair indices
    diffs, draws = np.array([0.0, 1.0, 3.0]), np.random.default_rng(3)
    for result in (first, again):
        means = diffs[draws.integers(0, 3, size=(50, 3))].mean(axis=1)
        assert result[1:] == pytest.approx((np.percentile(means, 2.5), np.percentile(means, 97.5)), rel=1e-12)
    with pytest.raises(ValueError, match="pair up"):
        experiments.paired_bootstrap([1.0, 2.0], [1.0], np.subtract)


def test_paired_bootstrap_of_rows_resamples_whole_rows():
    # rows of three columns (e.g. data sets): a statistic of one column draws exactly what that column alone draws
    gen = np.random.default_rng(9)
    a, b = gen.gamma(2.0, 1.0, size=(20, 3)), gen.gamma(2.0, 1.0, size=(20, 3))
    rows = experiments.paired_bootstrap(a, b, lambda x, y: rcp(x[..., 1], y[..., 1]), n_boot=500, random_state=4)
    column = experiments.paired_bootstrap(a[:, 1], b[:, 1], rcp, n_boot=500, random_state=4)
    assert rows == pytest.approx(column, rel=1e-12)
    # a statistic across the columns: the spread of the column means, its interval around the estimate
    est, low, high = experiments.paired_bootstrap(a, b, lambda x, y: np.ptp(x, axis=-1) - np.ptp(y, axis=-1))
    assert est == pytest.approx(np.ptp(a.mean(axis=0)) - np.ptp(b.mean(axis=0)), rel=1e-12) and low <= est <= high
    with pytest.raises(ValueError, match="pair up"):
        experiments.paired_bootstrap(a, b[:, :2], np.subtract)


def test_homogeneity_pvalue_closed_forms():
    # three bins {0}, {1}, {2}; observed [[30, 20, 10], [10, 20, 30]], expected 20 each: statistic 20, 2 df,
    # and the chi-squared survival function on 2 df is exp(-x / 2)
    a, b = [0] * 30 + [1] * 20 + [2] * 10, [0] * 10 + [1] * 20 + [2] * 30
    assert experiments.homogeneity_pvalue(a, b, n_bins=3) == pytest.approx(math.exp(-10), rel=1e-9)
    # two bins, [[30, 10], [10, 30]]: one degree of freedom, with Yates' correction (|O - E| - 0.5)^2 / E
    a, b = [0] * 30 + [1] * 10, [0] * 10 + [1] * 30
    statistic = 4 * 9.5**2 / 20
    p_one_df = math.erfc(math.sqrt(statistic / 2))  # chi-squared on 1 df: P(Z^2 > x) = erfc(sqrt(x / 2))
    assert experiments.homogeneity_pvalue(a, b, n_bins=2) == pytest.approx(p_one_df, rel=1e-9)


def test_homogeneity_pvalue_bad_input():
    with pytest.raises(ValueError, match="single value"):
        experiments.homogeneity_pvalue([1, 1], [1])
    with pytest.raises(ValueError, match="NaN"):
        experiments.homogeneity_pvalue([1.0, np.nan], [1.0])


class _Clock:
    """A fake perf_counter that a fit moves on by a known number of seconds."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_fit_seconds_keeps_the_fastest_of_fresh_fits(monkeypatch):
    clock, durations, built = _Clock(), iter([0.30, 0.125, 0.25]), []

    class Fit:
        def fit(self, X):
            clock.now += next(durations)
            return self

    def make():
        built.append(1)
        clock.now += 5.0  # construction is not timed
        return Fit()

    monkeypatch.setattr(experiments.time, "perf_counter", clock)
    assert experiments.fit_seconds(make, None, repeats=3) == pytest.approx(0.125)
    assert len(built) == 3
    with pytest.raises(ValueError, match="repeats"):
        experiments.fit_seconds(make, None, repeats=0)
