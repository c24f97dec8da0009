"""A catalogue of bad inputs across the public API.

Every case must raise ValueError or TypeError whose message names the
parameter and shows the offending value, so a user can fix the call without
reading the source.
"""
import numpy as np
import pytest

import dpclust_lib as dp
from dpclust_lib import datasets, experiments, frequency, metrics, privacy

X2 = np.array([[0, 1], [1, 0], [1, 1]])
XF = np.array([[0.1, 0.2], [0.5, 0.9], [0.3, 0.4]])
BOX = (0.0, 1.0)

CASES = [
    # (id, call, exception, words the message must contain)
    ("laplace eps 0", lambda: privacy.laplace_mechanism(1.0, 1.0, 0.0), ValueError, ["epsilon", "0.0"]),
    ("laplace eps nan", lambda: privacy.laplace_mechanism(1.0, 1.0, float("nan")), ValueError, ["epsilon", "nan"]),
    ("laplace eps inf", lambda: privacy.laplace_mechanism(1.0, 1.0, float("inf")), ValueError, ["epsilon", "inf"]),
    ("laplace eps str", lambda: privacy.laplace_mechanism(1.0, 1.0, "1"), TypeError, ["epsilon", "'1'"]),
    ("laplace sensitivity", lambda: privacy.laplace_mechanism(1.0, -2.0, 1.0), ValueError, ["sensitivity", "-2.0"]),
    ("grr k", lambda: privacy.grr_perturb(np.array([0]), 1, 1.0), ValueError, ["k", "1"]),
    ("grr outside", lambda: privacy.grr_perturb(np.array([0, 7]), 3, 1.0), ValueError, ["values[1, 0]", "domain"]),
    ("ue p<q", lambda: privacy.ue_perturb(np.eye(2, dtype=int), 0.2, 0.4), ValueError, ["p", "0.2"]),
    ("hamming domain", lambda: privacy.hamming_rr_perturb(X2, (2, 1), 1.0), ValueError, ["domain_sizes", "1"]),
    ("hamming outside", lambda: privacy.hamming_rr_perturb(X2 + 1, (2, 2), 1.0), ValueError, ["X", "2"]),
    ("ledger budget", lambda: privacy.PrivacyLedger(-1.0), ValueError, ["budget", "-1.0"]),
    ("ledger spend", lambda: privacy.PrivacyLedger(1.0).spend(float("nan"), "x"), ValueError, ["epsilon", "nan"]),
    ("ldpfo eps", lambda: frequency.LDPFO((2, 2), -1.0), ValueError, ["epsilon", "-1.0"]),
    ("oue k", lambda: frequency.OUE(0, 1.0), ValueError, ["k", "0"]),
    ("clip rounding", lambda: frequency.clip_and_normalise(np.ones(2), 2, rounding="up"), ValueError, ["rounding", "'up'"]),
    ("nicv metric", lambda: metrics.nicv(XF, XF, metric="l1"), ValueError, ["metric", "'l1'"]),
    ("entropy base", lambda: metrics.entropy([0, 1], [0, 1], base=0.5), ValueError, ["base", "0.5"]),
    ("load name", lambda: datasets.load("cars"), ValueError, ["name", "'cars'"]),
    ("load variant", lambda: datasets.load("car", "binary"), ValueError, ["variant", "'binary'"]),
    ("uniform n", lambda: datasets.make_uniform_square(0), ValueError, ["n_samples", "0"]),
    ("profile", lambda: experiments.resolve_profile("fast"), ValueError, ["profile", "'fast'"]),
    ("ledger verdict", lambda: experiments.Ledger("p").add("c1", "c", 1, 1, "ok"), ValueError, ["verdict", "'ok'"]),
    ("fit_seed run", lambda: experiments.fit_seed(0, 1.0, -1), ValueError, ["run", "-1"]),
    ("kmodes K 0", lambda: dp.KModes(0).fit(X2), ValueError, ["n_clusters", "0"]),
    ("kmodes K float", lambda: dp.KModes(2.5).fit(X2), TypeError, ["n_clusters", "2.5"]),
    ("kmodes K > records", lambda: dp.KModes(4).fit(X2), ValueError, ["n_clusters", "4"]),
    ("kmodes init", lambda: dp.KModes(2, init="best").fit(X2), ValueError, ["init", "'best'"]),
    ("kmodes NaN", lambda: dp.KModes(2).fit(np.array([[0.0, np.nan], [1.0, 0.0]])), ValueError, ["X", "NaN"]),
    ("kmodes weights", lambda: dp.KModes(2).fit(X2, sample_weight=[1, -1, 1]), ValueError, ["sample_weight", "-1"]),
    ("dpkmodes eps", lambda: dp.DPKModes(2, epsilon=0, domain_sizes=(2, 2)).fit(X2), ValueError, ["epsilon", "0"]),
    ("dpkmodes max_iter", lambda: dp.DPKModes(2, max_iter=0, domain_sizes=(2, 2)).fit(X2), ValueError, ["max_iter", "0"]),
    ("dpkmodes outside", lambda: dp.DPKModes(2, domain_sizes=(2, 2)).fit(X2 * 2), ValueError, ["X", "2"]),
    ("ldpk eps", lambda: dp.LDPKModes(2, epsilon=float("inf"), domain_sizes=(2, 2)).fit(X2), ValueError, ["epsilon", "inf"]),
    ("ldpk projection", lambda: dp.LDPKModes(2, projection="yes", domain_sizes=(2, 2)).fit(X2), TypeError, ["projection", "'yes'"]),
    ("ldpk rounding", lambda: dp.LDPKModes(2, rounding="floor", domain_sizes=(2, 2)).fit(X2), ValueError, ["rounding", "'floor'"]),
    ("sampling budget", lambda: dp.SamplingLDPKModes(2, budget="total", domain_sizes=(2, 2)).fit(X2), ValueError, ["budget", "'total'"]),
    ("sampling eps", lambda: dp.SamplingLDPKModes(2, epsilon=-0.1, domain_sizes=(2, 2)).fit(X2), ValueError, ["epsilon", "-0.1"]),
    ("kmeans init", lambda: dp.KMeans(2, init="best").fit(XF), ValueError, ["init", "'best'"]),
    ("kmeans n_init", lambda: dp.KMeans(2, n_init=0).fit(XF), ValueError, ["n_init", "0"]),
    ("kmeans NaN", lambda: dp.KMeans(2).fit(np.array([[0.1, np.nan], [0.2, 0.3]])), ValueError, ["X", "NaN"]),
    ("dpkmeans eps", lambda: dp.DPKMeans(2, epsilon=-1, bounds=BOX).fit(XF), ValueError, ["epsilon", "-1"]),
    ("dpkmeans schedule", lambda: dp.DPKMeans(2, schedule="decreasing", bounds=BOX).fit(XF), ValueError,
     ["schedule", "'decreasing'"]),
    ("dpkmeans bounds order", lambda: dp.DPKMeans(2, bounds=(1.0, 0.0)).fit(XF), ValueError, ["bounds", "1.0", "0.0"]),
    ("dpkmeans outside", lambda: dp.DPKMeans(2, bounds=BOX).fit(XF * 3), ValueError, ["X[1, 0]", "bounds"]),
    ("dpkmeans init", lambda: dp.DPKMeans(2, init="data", bounds=BOX).fit(XF), ValueError, ["init", "'data'"]),
    ("idp split", lambda: dp.IDPKMeans(2, split="half", bounds=BOX).fit(XF), ValueError, ["split", "'half'"]),
    ("dpkmeans++ share", lambda: dp.DPKMeansPP(2, seeding_share=1.5, bounds=BOX).fit(XF), ValueError,
     ["seeding_share", "1.5"]),
    ("eug grid", lambda: dp.EUGKMeans(2, grid_size=0, bounds=BOX).fit(XF), ValueError, ["grid_size", "0"]),
    ("dpqt gamma", lambda: dp.DPQTKMeans(2, gamma=1.5, bounds=BOX).fit(XF), ValueError, ["gamma", "1.5"]),
    ("dpqt height", lambda: dp.DPQTKMeans(2, max_height=-1, bounds=BOX).fit(XF), ValueError, ["max_height", "-1"]),
    ("birch threshold", lambda: dp.Birch(threshold=0.0).fit(XF), ValueError, ["threshold", "0.0"]),
    ("birch branching", lambda: dp.Birch(threshold=0.5, branching_factor=1).fit(XF), ValueError, ["branching_factor", "1"]),
    ("birch predict width", lambda: dp.Birch(2, threshold=0.1, branching_factor=50).fit(XF).predict(np.zeros((2, 3))), ValueError, ["X", "3", "2"]),
    ("dpbirch eps", lambda: dp.DPBirch(epsilon=float("nan"), bounds=BOX).fit(XF), ValueError, ["epsilon", "nan"]),
    ("dpbirch outside", lambda: dp.DPBirch(epsilon=1.0, bounds=BOX).fit(XF * 3), ValueError, ["X[1, 0]", "bounds"]),
    ("public tree skeleton", lambda: dp.DPBirchPublicTree(epsilon=1.0, skeleton="grid", bounds=BOX).fit(XF), ValueError,
     ["skeleton", "'grid'"]),
    ("public tree n_skeleton", lambda: dp.DPBirchPublicTree(epsilon=1.0, n_skeleton=0, bounds=BOX).fit(XF), ValueError, ["n_skeleton", "0"]),
    ("public tree split", lambda: dp.DPBirchPublicTree(epsilon=1.0, budget_split=(0.5, 0.5), bounds=BOX).fit(XF), ValueError,
     ["budget_split", "(0.5, 0.5)"]),
]


@pytest.mark.parametrize("call, exc, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_parameter_and_value(call, exc, words):
    with pytest.raises(exc) as err:
        call()
    message = str(err.value)
    for word in words:
        assert word in message, f"{word!r} missing from: {message}"


def test_catalogue_is_large_enough():
    assert len(CASES) >= 55
