"""The verdict rules and confidence intervals of experiments, against hand-computed values."""

import numpy as np
import pytest

from dpclust import experiments


def test_mean_ci95_uses_student_t():
    mean, half = experiments.mean_ci95([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert half == pytest.approx(4.302652729911275 / np.sqrt(3))  # t_{0.975, 2} from tables, sd = 1
    assert np.isnan(experiments.mean_ci95([1.0])[1])


def test_verdict_by_gap():
    assert experiments.verdict_by_gap([0.5, 0.61], [0.5, 0.6]) == ("reproduced", pytest.approx(0.01))
    assert experiments.verdict_by_gap([0.5, 0.7], [0.54, 0.6])[0] == "partly"
    assert experiments.verdict_by_gap([0.5, 0.7], [0.54, 0.6], partly_share=1.0)[0] == "not reproduced"
    assert experiments.verdict_by_gap([0.9, 0.7], [0.5, 0.6])[0] == "not reproduced"
    with pytest.raises(ValueError):
        experiments.verdict_by_gap([np.nan], [0.5])


def test_verdict_by_share_and_rises_with():
    assert experiments.verdict_by_share([True, True]) == "reproduced"
    assert experiments.verdict_by_share([True, False]) == "partly"
    assert experiments.verdict_by_share([False]) == "not reproduced"
    assert experiments.rises_with([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6])[0]
    assert not experiments.rises_with([1, 2, 3], [5, 5, 5])[0]
    assert not experiments.rises_with([1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1])[0]


def test_best_reading_prefers_the_best_verdict_then_the_smaller_gap():
    reading, verdict, tried = experiments.best_reading(
        {"a": ("not reproduced", 0.1), "b": ("partly", 0.3), "c": ("partly", 0.2)}
    )
    assert (reading, verdict) == ("c", "partly")
    assert tried == "a: not reproduced; b: partly; c: partly"
    with pytest.raises(ValueError):
        experiments.best_reading({"a": ("not run", 0.0)})


def test_verdict_by_share_reads_a_generator_case_by_case():
    assert experiments.verdict_by_share(x > 1 for x in [0, 1, 2]) == "partly"
    assert experiments.verdict_by_share(x > 5 for x in [0, 1, 2]) == "not reproduced"
    assert experiments.verdict_by_share(iter([])) == "not run"
