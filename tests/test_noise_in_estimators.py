"""Every central estimator draws exact grid noise by default, and textbook float noise only by name.

The references are independent of the estimators: the grid spacing follows from the public
sensitivity and epsilon alone (dpclust_lib.noise.laplace_noise_grid), and Mironov's attack replays
numpy's own floating-point arithmetic (dpclust_lib.audit.floating).
"""

import warnings

import numpy as np
import pytest

from dpclust_lib import DPKMeans, DPKMeansPP, DPKModes, DPQTKMeans, EUGKMeans, IDPKMeans, PrivacyLeakWarning
from dpclust_lib.audit.floating import mironov_attack
from dpclust_lib.noise import laplace_noise_grid

UNIT = ((0.0, 0.0), (1.0, 1.0))
X = np.random.default_rng(3).random((60, 2))
CODES = np.random.default_rng(3).integers(0, 3, size=(60, 3))

CENTRAL = {
    "DPKMeans": (lambda **kw: DPKMeans(2, epsilon=1.0, max_iter=2, bounds=UNIT, random_state=0, **kw), X),
    "IDPKMeans": (lambda **kw: IDPKMeans(2, epsilon=1.0, max_iter=2, bounds=UNIT, random_state=0, **kw), X),
    "DPKMeansPP": (
        lambda **kw: DPKMeansPP(2, epsilon=1.0, max_iter=2, bounds=UNIT, n_public=60, random_state=0, **kw),
        X,
    ),
    "EUGKMeans": (lambda **kw: EUGKMeans(2, epsilon=1.0, bounds=UNIT, n_public=60, random_state=0, **kw), X),
    "DPQTKMeans": (lambda **kw: DPQTKMeans(2, epsilon=1.0, bounds=UNIT, n_public=60, random_state=0, **kw), X),
    "DPKModes": (lambda **kw: DPKModes(2, epsilon=1.0, domain_sizes=(3, 3, 3), random_state=0, **kw), CODES),
}


@pytest.mark.parametrize("name", CENTRAL)
def test_exact_noise_is_the_default_and_float_noise_is_asked_for_by_name(name):
    make, data = CENTRAL[name]
    assert make().get_params()["noise"] == "exact"
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        exact = make().fit(data)
    assert np.isfinite(exact.epsilon_guaranteed_) and exact.epsilon_guaranteed_ >= exact.epsilon_spent_
    with pytest.warns(PrivacyLeakWarning, match="Mironov"):
        textbook = make(noise="float").fit(data)
    assert textbook.epsilon_guaranteed_ == np.inf and textbook.epsilon_spent_ == exact.epsilon_spent_
    again = make().fit(data)  # seeded: the same bits
    np.testing.assert_array_equal(again.cluster_centers_, exact.cluster_centers_)
    with pytest.raises(ValueError, match="noise") as err:
        make(noise="gaussian").fit(data)
    assert "exact" in str(err.value) and "float" in str(err.value)


def test_released_counts_lie_on_the_public_grid_and_resist_the_floating_point_attack():
    est = EUGKMeans(2, epsilon=1.0, bounds=UNIT, n_public=60, random_state=0).fit(X)
    counts = est.bucket_counts_
    gamma = laplace_noise_grid(1.0, 1.0, counts.size)  # from public quantities only
    assert np.array_equal(counts / gamma, np.round(counts / gamma))
    # An empty cell's count (0) and a neighbour's (1) reach the same grid: nothing names the input.
    assert mironov_attack(counts, 1.0, 1.0, noise="exact", gamma=gamma) == 0.0


def test_textbook_counts_name_their_input():
    with pytest.warns(PrivacyLeakWarning):
        est = EUGKMeans(2, epsilon=1.0, bounds=UNIT, grid_size=40, random_state=0, noise="float").fit(X)
    empty = est.bucket_counts_[:200]  # 1,600 cells for 60 records: nearly all of these are empty (count 0)
    assert mironov_attack(empty, 1.0, 1.0, noise="float") > 0.5
