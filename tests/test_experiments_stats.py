"""The interval and verdict helpers of the ledgers, against closed forms computed by hand."""

import math

import numpy as np
import pytest

from dpclust import experiments

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
    assert experiments.verdict_by_share(holds) == verdict


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
