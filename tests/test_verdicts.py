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


def test_new_rules_run_their_examples():
    import doctest

    names = ["best_verdict", "verdict_by_tests", "verdict_by_shares", "verdict_by_intervals"]
    names += ["paired_bootstrap", "homogeneity_pvalue", "fit_seconds"]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for name in names:
        for test in doctest.DocTestFinder().find(
            getattr(experiments, name), name, globs={"np": np, **vars(experiments)}
        ):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize(
    "verdicts, best",
    [
        ({"a": "partly", "b": "reproduced", "c": "not reproduced"}, "b"),
        ({"a": "partly", "b": "partly"}, "a"),  # ties go to the first reading
        ({"a": "not run", "b": "not reproduced"}, "b"),
        ({"a": "not testable", "b": "not run"}, "a"),
    ],
)
def test_best_verdict(verdicts, best):
    assert experiments.best_verdict(verdicts) == best


def test_best_verdict_refuses_unknown_verdicts():
    with pytest.raises(ValueError, match="verdict of reading 'a'"):
        experiments.best_verdict({"a": "maybe"})
    with pytest.raises(ValueError, match="empty"):
        experiments.best_verdict({})


@pytest.mark.parametrize(
    "reproduced, partly, testable, verdict",
    [
        (True, False, True, "reproduced"),
        (False, True, True, "partly"),
        (False, False, True, "not reproduced"),
        (True, True, False, "not testable"),
    ],
)
def test_verdict_by_tests(reproduced, partly, testable, verdict):
    assert experiments.verdict_by_tests(reproduced, partly, testable) == verdict


@pytest.mark.parametrize(
    "shares, verdict",
    [
        ([0.8, 1.0], "reproduced"),  # the threshold itself counts
        ([0.79, 1.0], "partly"),
        ([0.5, 0.1], "partly"),
        ([0.49, 0.1], "not reproduced"),
        ([], "not run"),
    ],
)
def test_verdict_by_shares(shares, verdict):
    assert experiments.verdict_by_shares(shares) == verdict


def test_verdict_by_shares_of_a_whole_grid():
    # Fig. 3 style: "reproduced" only if ahead at every epsilon, "partly" at half of them
    assert experiments.verdict_by_shares([13 / 13], reproduced_at=1.0) == "reproduced"
    assert experiments.verdict_by_shares([12 / 13], reproduced_at=1.0) == "partly"
    assert experiments.verdict_by_shares([6 / 13], reproduced_at=1.0) == "not reproduced"


def test_verdict_by_intervals_counts_against_the_share():
    # 13 intervals, share 10/13: ten wholly above 0 and none below reproduce; nine do not
    low = np.array([0.1] * 10 + [-0.1] * 3)
    assert experiments.verdict_by_intervals(low, low + 0.5, share=10 / 13) == ("reproduced", 10, 0)
    low[0] = -0.1
    assert experiments.verdict_by_intervals(low, low + 0.5, share=10 / 13) == ("partly", 9, 0)
    # one interval wholly below is enough to stop "reproduced", whatever the count above
    low, high = np.array([0.1] * 12 + [-0.9]), np.array([0.5] * 12 + [-0.5])
    assert experiments.verdict_by_intervals(low, high, share=10 / 13) == ("partly", 12, 1)
    # at least one interval must lie above, even where share * n rounds to 0
    assert experiments.verdict_by_intervals([-0.1], [0.1], share=0.4) == ("not reproduced", 0, 0)


def test_verdict_by_intervals_bad_input():
    with pytest.raises(ValueError, match="one length"):
        experiments.verdict_by_intervals([0.1, 0.2], [0.3])
    with pytest.raises(ValueError, match="share"):
        experiments.verdict_by_intervals([0.1], [0.3], share=0.0)
