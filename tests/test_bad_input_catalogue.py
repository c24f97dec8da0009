"""A catalogue of bad inputs across the public API of privacy, frequency, metrics,
experiments, datasets and plotting (the estimators' cases are in
test_bad_input_numeric.py and test_bad_input_categorical.py, but for their parameters' limits here).

Every case must raise a clear error -- ValueError, TypeError, our DataError (or
the ledger's BudgetExceededError) -- whose message names the parameter and, for
a parameter, the offending value; never a raw numpy/Python error and never a
silent result. A record's value is never shown (error text is an output too):
cases on private values name the position and the bound, and ``absent`` lists
text that must not appear.
"""

import numpy as np
import pandas as pd
import pytest

from dpclust import datasets, experiments, plotting, verdicts
from dpclust.datasets import DataError
from dpclust_lib import DPBirchPublicTree, DPKMeans, DPKModes, EUGKMeans, IDPKMeans, frequency, mechanisms, metrics
from dpclust_lib.accounting import BudgetExceededError, PrivacyLedger
from dpclust_lib.frequency import GRR, LDPFO, OUE, Tally, UnaryEncoding
from dpclust_lib.noise import exp_interval, sample_bernoulli

X2 = np.array([[0, 1], [1, 0], [1, 1]])
XF = np.array([[0.1, 0.2], [0.5, 0.9], [0.3, 0.4]])
FRAME = pd.DataFrame(
    {"algorithm": ["a", "a"], "dataset": ["d", "d"], "epsilon": [1.0, 1.0], "run": [0, 1], "nicv": [0.1, 0.2]}
)
SQUARE = datasets.make_uniform_square(10)
ALG = {"a": lambda eps, rs: None}
SECRET = 12345.678  # a "record value" that must never appear in a message


def _sweep(**kw):
    args = dict(algorithms=ALG, datasets=SQUARE, epsilons=[1.0], n_runs=1, metrics={})
    args.update(kw)
    return experiments.sweep(**args)


def _plot(**kw):
    args = dict(frame=FRAME, metric="nicv")
    args.update(kw)
    return plotting.metric_vs_epsilon(**args)


CASES = [
    # (id, call, exception, words the message must contain[, words it must not contain])
    # ---- privacy: Laplace
    ("laplace eps 0", lambda: mechanisms.laplace_mechanism(1.0, 1.0, 0.0), ValueError, ["epsilon", "0.0"]),
    ("laplace eps nan", lambda: mechanisms.laplace_mechanism(1.0, 1.0, float("nan")), ValueError, ["epsilon", "nan"]),
    ("laplace eps inf", lambda: mechanisms.laplace_mechanism(1.0, 1.0, float("inf")), ValueError, ["epsilon", "inf"]),
    ("laplace eps str", lambda: mechanisms.laplace_mechanism(1.0, 1.0, "1"), TypeError, ["epsilon", "'1'"]),
    ("laplace eps bool", lambda: mechanisms.laplace_mechanism(1.0, 1.0, True), TypeError, ["epsilon", "True"]),
    ("laplace sensitivity", lambda: mechanisms.laplace_mechanism(1.0, -2.0, 1.0), ValueError, ["sensitivity", "-2.0"]),
    (
        "laplace sensitivity inf",
        lambda: mechanisms.laplace_scale(float("inf"), 1.0),
        ValueError,
        ["sensitivity", "inf"],
    ),
    ("laplace scale overflows", lambda: mechanisms.laplace_mechanism(1.0, 1e300, 1e-10), ValueError, ["scale", "inf"]),
    (
        "laplace scale underflows",
        lambda: mechanisms.laplace_mechanism(1.0, 1e-300, 1e300),
        ValueError,
        ["scale", "0.0"],
    ),
    (
        "laplace value str",
        lambda: mechanisms.laplace_mechanism(str(SECRET), 1.0, 1.0),
        TypeError,
        ["value", "str"],
        ["12345"],
    ),
    ("laplace value None", lambda: mechanisms.laplace_mechanism(None, 1.0, 1.0), TypeError, ["value", "NoneType"]),
    ("laplace value bool", lambda: mechanisms.laplace_mechanism(True, 1.0, 1.0), TypeError, ["value", "bool"]),
    (
        "laplace value strings",
        lambda: mechanisms.laplace_mechanism(["1", str(SECRET)], 1.0, 1.0),
        TypeError,
        ["value", "dtype"],
        ["12345"],
    ),
    ("laplace value ragged", lambda: mechanisms.laplace_mechanism([[1.0, 2.0], [3.0]], 1.0, 1.0), TypeError, ["value"]),
    (
        "laplace value nan",
        lambda: mechanisms.laplace_mechanism([SECRET, np.nan], 1.0, 1.0),
        ValueError,
        ["value", "index (1,)"],
        ["12345"],
    ),
    (
        "laplace epsilon past the grid",
        lambda: mechanisms.laplace_mechanism(1.0, 1.0, 1e30),
        ValueError,
        ["epsilon", "grid"],
    ),
    (
        "laplace random_state -3",
        lambda: mechanisms.laplace_mechanism(1.0, 1.0, 1.0, -3),
        ValueError,
        ["random_state", "-3"],
    ),
    (
        "laplace random_state str",
        lambda: mechanisms.laplace_mechanism(1.0, 1.0, 1.0, "seed"),
        TypeError,
        ["random_state", "'seed'"],
    ),
    (
        "laplace legacy RandomState",
        lambda: mechanisms.laplace_mechanism(1.0, 1.0, 1.0, np.random.RandomState(0)),
        TypeError,
        ["random_state", "RandomState"],
    ),
    # ---- privacy: GRR
    ("grr k", lambda: mechanisms.grr_perturb(np.array([0]), 1, 1.0), ValueError, ["k", "1"]),
    ("grr k float", lambda: mechanisms.grr_perturb(np.array([0]), 3.0, 1.0), TypeError, ["k", "3.0"]),
    ("grr outside", lambda: mechanisms.grr_perturb(np.array([0, 7]), 3, 1.0), ValueError, ["values[1, 0]", "0..2"]),
    ("grr float codes", lambda: mechanisms.grr_perturb(np.array([0.0, 1.0]), 3, 1.0), TypeError, ["values", "float64"]),
    ("grr 2-D", lambda: mechanisms.grr_perturb(np.zeros((2, 2), int), 3, 1.0), ValueError, ["values", "(2, 2)"]),
    ("grr empty", lambda: mechanisms.grr_perturb(np.array([], int), 3, 1.0), ValueError, ["values", "empty"]),
    (
        "grr eps 710",
        lambda: mechanisms.grr_perturb(np.zeros(10, int), 3, 710.0, 0),
        ValueError,
        ["epsilon=710.0", "safe range"],
    ),
    ("grr eps past cap", lambda: mechanisms.grr_probabilities(3, 27.8), ValueError, ["epsilon=27.8", "27.73"]),
    ("grr k huge", lambda: mechanisms.grr_probabilities(2**41, 1.0), ValueError, ["k", str(2**41)]),
    ("grr dense matrix", lambda: mechanisms.grr_matrix(10**6, 1.0), ValueError, ["k", "4096"]),
    # ---- privacy: unary encoding
    ("sue eps past cap", lambda: mechanisms.sue_pq(60.0), ValueError, ["epsilon=60.0", "55.45"]),
    ("oue eps past cap", lambda: mechanisms.oue_pq(30.0), ValueError, ["epsilon=30.0", "27.73"]),
    ("ue p<q", lambda: mechanisms.ue_perturb(np.eye(2, dtype=int), 0.2, 0.4), ValueError, ["p", "0.2"]),
    ("ue p nan", lambda: mechanisms.ue_perturb(np.eye(2, dtype=int), float("nan"), 0.1), ValueError, ["p", "nan"]),
    ("ue p str", lambda: mechanisms.ue_perturb(np.eye(2, dtype=int), "0.5", 0.1), TypeError, ["p", "'0.5'"]),
    ("ue q below 2^-40", lambda: mechanisms.ue_perturb(np.eye(2, dtype=int), 0.5, 1e-13), ValueError, ["q", "1e-13"]),
    (
        "ue bits not binary",
        lambda: mechanisms.ue_perturb(np.full((2, 2), 2), 0.5, 0.1),
        ValueError,
        ["bits", "0 and 1"],
    ),
    ("ue bits empty", lambda: mechanisms.ue_perturb(np.zeros((0, 3), int), 0.5, 0.1), ValueError, ["bits", "(0, 3)"]),
    ("unary values 2-D", lambda: mechanisms.unary_encode(np.zeros((2, 2), int), 3), ValueError, ["values", "(2, 2)"]),
    ("unary k", lambda: mechanisms.unary_encode(np.zeros(2, int), 1), ValueError, ["k", "1"]),
    (
        "unary too many bits",
        lambda: mechanisms.unary_encode(np.zeros(2**20, int), 32),
        ValueError,
        ["values", "k=32", "MAX_REPORT_BITS"],
    ),
    ("ue_epsilon p = q", lambda: mechanisms.ue_epsilon(0.3, 0.3), ValueError, ["p", "q", "0.3"]),
    # ---- privacy: Hamming-distance RR
    ("hamming domain", lambda: mechanisms.hamming_rr_perturb(X2, (2, 1), 1.0), ValueError, ["domain_sizes[1]", "1"]),
    ("hamming outside", lambda: mechanisms.hamming_rr_perturb(X2 + 1, (2, 2), 1.0), ValueError, ["X[0, 1]", "0..1"]),
    ("hamming 1-D", lambda: mechanisms.hamming_rr_perturb(np.array([0, 1]), (2, 2), 1.0), ValueError, ["X", "(2,)"]),
    ("hamming float", lambda: mechanisms.hamming_rr_perturb(XF, (2, 2), 1.0), TypeError, ["X", "float64"]),
    ("hamming width", lambda: mechanisms.hamming_rr_perturb(X2, (2, 2, 2), 1.0), ValueError, ["X", "2", "3"]),
    (
        "hamming nan",
        lambda: mechanisms.hamming_rr_perturb(np.array([[0, np.nan]]), (2, 2), 1.0),
        ValueError,
        ["X", "NaN", "(0, 1)"],
    ),
    ("hamming eps past cap", lambda: mechanisms.hamming_rr_perturb(X2, (2, 2), 100.0), ValueError, ["epsilon=100.0"]),
    ("pmf m", lambda: mechanisms.hamming_rr_distance_pmf(0, 2, 1.0), ValueError, ["m", "0"]),
    ("pmf k float", lambda: mechanisms.hamming_rr_distance_pmf(2, 2.0, 1.0), TypeError, ["k", "2.0"]),
    ("pmf eps past cap", lambda: mechanisms.hamming_rr_distance_pmf(2, 2, 800.0), ValueError, ["epsilon=800.0"]),
    (
        "dense matrix cells",
        lambda: mechanisms.hamming_rr_matrix((100, 100), 1.0),
        ValueError,
        ["domain_sizes", "10000", "4096"],
    ),
    (
        "dense matrix wraps",
        lambda: mechanisms.hamming_rr_matrix((2**32, 2**32), 1.0),
        ValueError,
        ["domain_sizes", str(2**64)],
    ),
    # ---- privacy: ledger
    ("ledger budget", lambda: PrivacyLedger(-1.0), ValueError, ["budget", "-1.0"]),
    ("ledger budget str", lambda: PrivacyLedger("1"), TypeError, ["budget", "'1'"]),
    ("ledger spend", lambda: PrivacyLedger(1.0).spend(float("nan"), "x"), ValueError, ["epsilon", "nan"]),
    ("ledger spend what", lambda: PrivacyLedger(1.0).spend(0.5, ""), TypeError, ["what", "''"]),
    ("ledger over budget", lambda: PrivacyLedger(1.0).spend(2.0, "x"), BudgetExceededError, ["epsilon=2", "budget"]),
    # ---- frequency
    ("GRR k", lambda: GRR(1, 1.0), ValueError, ["k", "1"]),
    ("GRR k over MAX_CELLS", lambda: GRR(2**23, 1.0), ValueError, ["k", str(2**22)]),
    ("GRR eps 0", lambda: GRR(3, 0.0), ValueError, ["epsilon", "0.0"]),
    ("GRR eps 710", lambda: GRR(3, 710.0), ValueError, ["epsilon=710.0"]),
    ("GRR count outside", lambda: GRR(3, 1.0).count(np.array([0, 3])), ValueError, ["reports[1, 0]", "0..2"]),
    ("GRR count 2-D", lambda: GRR(3, 1.0).count(np.array([[0, 1]])), ValueError, ["reports", "1-D"]),
    ("GRR count floats", lambda: GRR(3, 1.0).count(np.array([0.5])), TypeError, ["reports", "float64"]),
    ("GRR perturb floats", lambda: GRR(3, 1.0).perturb(np.array([0.0, 1.0])), TypeError, ["values", "float64"]),
    ("GRR estimate not tally", lambda: GRR(3, 1.0).estimate("x"), TypeError, ["tally", "str"]),
    ("GRR variance n", lambda: GRR(3, 1.0).variance(0), ValueError, ["n", "0"]),
    ("GRR variance shape", lambda: GRR(3, 1.0).variance(10, [5, 5]), ValueError, ["true_counts", "(3,)", "(2,)"]),
    ("GRR variance negative", lambda: GRR(3, 1.0).variance(10, [5, 7, -2]), ValueError, ["true_counts", ">= 0"]),
    ("GRR variance sum", lambda: GRR(3, 1.0).variance(10, [5, 3, 3]), ValueError, ["true_counts", "11", "n=10"]),
    ("GRR variance strings", lambda: GRR(3, 1.0).variance(10, ["5", "3", "2"]), TypeError, ["true_counts", "dtype"]),
    ("OUE k", lambda: OUE(0, 1.0), ValueError, ["k", "0"]),
    ("OUE eps", lambda: OUE(3, -1.0), ValueError, ["epsilon", "-1.0"]),
    ("OUE count shape", lambda: OUE(3, 1.0).count(np.ones((2, 4), dtype=int)), ValueError, ["reports", "(2, 4)"]),
    ("OUE count not binary", lambda: OUE(3, 1.0).count(np.full((2, 3), 2)), ValueError, ["reports", "0 and 1"]),
    ("OUE estimate shape", lambda: OUE(3, 1.0).estimate(Tally(np.zeros(4), 1)), ValueError, ["tally", "(4,)", "(3,)"]),
    ("OUE variance nan", lambda: OUE(3, 1.0).variance(10, [5, np.nan, 5]), ValueError, ["true_counts", "finite"]),
    ("UE k str", lambda: UnaryEncoding("3", 0.5, 0.1), TypeError, ["k", "'3'"]),
    ("UE p str", lambda: UnaryEncoding(3, "0.5", 0.1), TypeError, ["p", "'0.5'"]),
    ("SUE eps past cap", lambda: UnaryEncoding.sue(3, 60.0), ValueError, ["epsilon=60.0"]),
    ("LDPFO eps", lambda: LDPFO((2, 2), -1.0), ValueError, ["epsilon", "-1.0"]),
    ("LDPFO eps inf", lambda: LDPFO((2, 2), float("inf")), ValueError, ["epsilon", "inf"]),
    ("LDPFO domain 1", lambda: LDPFO((2, 1), 1.0), ValueError, ["domain_sizes[1]", "1"]),
    ("LDPFO domain empty", lambda: LDPFO((), 1.0), ValueError, ["domain_sizes", "()"]),
    ("LDPFO domain floats", lambda: LDPFO((2.0, 2.0), 1.0), TypeError, ["domain_sizes", "2.0"]),
    ("LDPFO domain str", lambda: LDPFO("22", 1.0), ValueError, ["domain_sizes", "'22'"]),
    ("LDPFO domain scalar", lambda: LDPFO(2, 1.0), ValueError, ["domain_sizes", "2"]),
    ("LDPFO cells", lambda: LDPFO((2**12, 2**11), 1.0), ValueError, ["domain_sizes", str(2**23), "MAX_CELLS"]),
    ("LDPFO cells wrap", lambda: LDPFO((2**32, 2**32), 1.0), ValueError, ["domain_sizes", str(2**64)]),
    ("LDPFO wide attribute", lambda: LDPFO((2, 5000), 1.0), ValueError, ["domain_sizes[1]=5000", "4096"]),
    ("LDPFO perturb width", lambda: LDPFO((2, 2), 1.0).perturb(np.zeros((2, 3), int)), ValueError, ["X", "3", "2"]),
    ("LDPFO count outside", lambda: LDPFO((2, 2), 1.0).count(np.array([[0, 2]])), ValueError, ["X[0, 1]", "0..1"]),
    (
        "LDPFO estimate shape",
        lambda: LDPFO((2, 2), 1.0).estimate(Tally(np.zeros(4), 1)),
        ValueError,
        ["tally", "(4,)", "(2, 2)"],
    ),
    ("LDPFO estimate array", lambda: LDPFO((2, 2), 1.0).estimate(np.zeros((2, 2))), TypeError, ["tally", "ndarray"]),
    ("LDPFO variance needs counts", lambda: LDPFO((2, 2), 1.0).variance(10), ValueError, ["true_counts", "required"]),
    (
        "LDPFO variance shape",
        lambda: LDPFO((2, 3), 1.0).variance(6, np.ones(6)),
        ValueError,
        ["true_counts", "(2, 3)", "(6,)"],
    ),
    ("tally shapes", lambda: Tally(np.zeros(2), 1) + Tally(np.zeros(3), 1), ValueError, ["(2,)", "(3,)"]),
    ("tally plus int", lambda: Tally(np.zeros(2), 1) + 3, TypeError, ["Tally", "int"]),
    ("stream empty", lambda: frequency.aggregate_stream(GRR(3, 1.0), iter([])), ValueError, ["report_chunks", "empty"]),
    ("stream oracle", lambda: frequency.aggregate_stream(None, [np.array([0])]), TypeError, ["oracle", "NoneType"]),
    ("stream array", lambda: frequency.aggregate_stream(GRR(3, 1.0), np.array([0, 1])), TypeError, ["report_chunks"]),
    ("joint_index outside", lambda: frequency.joint_index(np.array([[0, 2]]), (2, 2)), ValueError, ["X[0, 1]", "0..1"]),
    ("joint_records index", lambda: frequency.joint_records(np.array([5]), (2, 2)), ValueError, ["index", "0..3"]),
    (
        "joint_records floats",
        lambda: frequency.joint_records(np.array([1.0]), (2, 2)),
        ValueError,
        ["index", "integers"],
    ),
    (
        "clip rounding",
        lambda: frequency.clip_and_normalise(np.ones(2), 2, rounding="up"),
        ValueError,
        ["rounding", "'up'"],
    ),
    ("clip nan", lambda: frequency.clip_and_normalise(np.array([1.0, np.nan]), 2), ValueError, ["estimate", "finite"]),
    ("clip n 0", lambda: frequency.clip_and_normalise(np.array([1.0]), 0), ValueError, ["n", "0"]),
    ("clip n float", lambda: frequency.clip_and_normalise(np.ones(2), 2.5), TypeError, ["n", "2.5"]),
    ("clip strings", lambda: frequency.clip_and_normalise(["a"], 2), TypeError, ["estimate", "dtype"]),
    ("clip all negative", lambda: frequency.clip_and_normalise(-np.ones(2), 2), ValueError, ["estimate", "<= 0"]),
    ("norm_sub n", lambda: frequency.norm_sub(np.ones(2), 0), ValueError, ["n", "0"]),
    ("norm_sub nan", lambda: frequency.norm_sub(np.array([np.nan]), 2), ValueError, ["estimate", "finite"]),
    ("norm_sub strings", lambda: frequency.norm_sub(["a", "b"], 2), TypeError, ["estimate", "dtype"]),
    # ---- metrics
    ("contingency 2-D", lambda: metrics.contingency_table([[0]], [0]), ValueError, ["labels", "(1, 1)"]),
    (
        "contingency lengths",
        lambda: metrics.contingency_table([0, 1], [0]),
        ValueError,
        ["labels_true", "2", "labels_pred", "1"],
    ),
    ("contingency empty", lambda: metrics.contingency_table([], []), ValueError, ["labels", "empty"]),
    ("contingency nan", lambda: metrics.contingency_table([0, np.nan], [0, 1]), ValueError, ["labels_true", "NaN"]),
    ("contingency None", lambda: metrics.contingency_table(None, [0]), TypeError, ["labels_true", "NoneType"]),
    ("contingency mixed", lambda: metrics.contingency_table([0, "a"], [0, 1]), TypeError, ["labels_true", "mixes"]),
    ("nicv metric", lambda: metrics.nicv(XF, XF, metric="l1"), ValueError, ["metric", "'l1'"]),
    ("nicv centers width", lambda: metrics.nicv(XF, np.zeros((2, 3))), ValueError, ["centers", "3", "X", "2"]),
    ("nicv X nan", lambda: metrics.nicv(np.array([[np.nan, 1.0]]), XF), ValueError, ["X", "NaN", "(0, 0)"]),
    ("nicv centers nan", lambda: metrics.nicv(XF, np.array([[np.nan, 1.0]])), ValueError, ["centers", "NaN"]),
    ("nicv X 1-D", lambda: metrics.nicv(np.zeros(3), XF), ValueError, ["X", "(3,)"]),
    ("nicv weights", lambda: metrics.nicv(XF, XF, sample_weight=[1, -1, 1]), ValueError, ["sample_weight[1]", "-1"]),
    (
        "nicv weights length",
        lambda: metrics.nicv(XF, XF, sample_weight=[1, 1]),
        ValueError,
        ["sample_weight", "2", "3"],
    ),
    ("nicv labels range", lambda: metrics.nicv(XF, XF, labels=[0, 1, 5]), ValueError, ["labels", "0..2"]),
    ("nicv hamming floats", lambda: metrics.nicv(XF, XF, metric="hamming"), TypeError, ["X", "hamming"]),
    ("f1 lengths", lambda: metrics.f_measure_one_to_one([0, 1], [0]), ValueError, ["labels_true", "labels_pred"]),
    ("best match beta", lambda: metrics.f_measure_best_match([0, 1], [0, 1], beta=-1), ValueError, ["beta", "-1"]),
    (
        "best match beta nan",
        lambda: metrics.f_measure_best_match([0, 1], [0, 1], beta=float("nan")),
        ValueError,
        ["beta", "nan"],
    ),
    ("best match beta str", lambda: metrics.f_measure_best_match([0, 1], [0, 1], beta="1"), TypeError, ["beta", "'1'"]),
    ("accuracy empty", lambda: metrics.accuracy([], []), ValueError, ["labels", "empty"]),
    ("entropy base", lambda: metrics.entropy([0, 1], [0, 1], base=0.5), ValueError, ["base", "0.5"]),
    ("entropy base str", lambda: metrics.entropy([0, 1], [0, 1], base="e"), TypeError, ["base", "'e'"]),
    ("entropy base inf", lambda: metrics.entropy([0, 1], [0, 1], base=float("inf")), ValueError, ["base", "inf"]),
    ("rand lengths", lambda: metrics.rand_index([0, 1], [0]), ValueError, ["labels_true", "labels_pred"]),
    ("ari nan", lambda: metrics.adjusted_rand_index([0, 1], [0, np.nan]), ValueError, ["labels_pred", "NaN"]),
    ("rcp zero", lambda: metrics.rcp(0.0, 1.0), ValueError, ["nicv_reference", "> 0"]),
    ("rcp nan", lambda: metrics.rcp(1.0, float("nan")), ValueError, ["nicv_method", "finite"]),
    ("rcp str", lambda: metrics.rcp("1", 1.0), TypeError, ["nicv_reference", "dtype"]),
    (
        "rcp shapes",
        lambda: metrics.rcp([1.0, 2.0], [1.0, 2.0, 3.0]),
        ValueError,
        ["nicv_reference", "(2,)", "nicv_method", "(3,)"],
    ),
    # ---- experiments
    ("sweep algorithms list", lambda: _sweep(algorithms=[1]), TypeError, ["algorithms", "dict"]),
    ("sweep algorithms empty", lambda: _sweep(algorithms={}), TypeError, ["algorithms", "non-empty"]),
    ("sweep datasets", lambda: _sweep(datasets="car"), TypeError, ["datasets", "Dataset"]),
    ("sweep epsilons empty", lambda: _sweep(epsilons=[]), ValueError, ["epsilons", "empty"]),
    ("sweep n_runs 0", lambda: _sweep(n_runs=0), ValueError, ["n_runs", "0"]),
    ("sweep n_runs float", lambda: _sweep(n_runs=1.5), TypeError, ["n_runs", "1.5"]),
    ("sweep metrics list", lambda: _sweep(metrics=["nicv"]), TypeError, ["metrics", "dict"]),
    ("sweep seed", lambda: _sweep(seed=-1), ValueError, ["seed", "-1"]),
    ("sweep n_jobs 0", lambda: _sweep(n_jobs=0), ValueError, ["n_jobs", "0"]),
    ("sweep backend", lambda: _sweep(backend="nope"), ValueError, ["backend", "nope"]),
    ("fit_seed seed", lambda: experiments.fit_seed(-1, 1.0, 0), ValueError, ["seed", "-1"]),
    ("fit_seed seed float", lambda: experiments.fit_seed(1.5, 1.0, 0), TypeError, ["seed", "1.5"]),
    ("fit_seed run", lambda: experiments.fit_seed(0, 1.0, -1), ValueError, ["run", "-1"]),
    ("fit_seed run float", lambda: experiments.fit_seed(0, 1.0, 0.5), TypeError, ["run", "0.5"]),
    (
        "ledger verdict",
        lambda: verdicts.Ledger("p").add("c1", "c", 1, 1, "ok", artefact="F1"),
        ValueError,
        ["verdict", "'ok'"],
    ),
    (
        "ledger duplicate claim",
        lambda: (
            verdicts.Ledger("p")
            .add("c1", "c", 1, 1, "partly", artefact="F1")
            .add("c1", "c", 1, 1, "partly", artefact="F2")
        ),
        ValueError,
        ["claim_id", "'c1'"],
    ),
    (
        "ledger added_after_results",
        lambda: verdicts.Ledger("p").alternative("ch", "r", "s", added_after_results="yes"),
        TypeError,
        ["added_after_results", "'yes'"],
    ),
    ("ledger save without notebook", lambda: verdicts.Ledger("p").save("unused"), ValueError, ["notebook"]),
    ("load_dataset name", lambda: experiments.load_dataset("cars"), ValueError, ["name", "'cars'"]),
    ("load_dataset variant", lambda: experiments.load_dataset("car", "binary"), ValueError, ["variant", "'binary'"]),
    ("load_dataset name int", lambda: experiments.load_dataset(3), ValueError, ["name", "3"]),
    ("sweep algorithm not callable", lambda: _sweep(algorithms={"a": 3}), TypeError, ["algorithms['a']", "callable"]),
    ("sweep metric not callable", lambda: _sweep(metrics={"m": 3}), TypeError, ["metrics['m']", "callable"]),
    ("sweep returns no estimator", lambda: _sweep(), TypeError, ["returned NoneType", "estimator"]),
    ("sweep epsilons number", lambda: _sweep(epsilons=1.0), TypeError, ["epsilons", "1.0"]),
    ("sweep epsilon str", lambda: _sweep(epsilons=["1"]), TypeError, ["epsilon", "'1'"]),
    ("fit_seed epsilon str", lambda: experiments.fit_seed(0, "1", 0), TypeError, ["epsilon", "'1'"]),
    ("summarise frame", lambda: experiments.summarise([1, 2], ["nicv"]), TypeError, ["frame", "DataFrame"]),
    ("summarise metrics str", lambda: experiments.summarise(FRAME, "nicv"), TypeError, ["metrics", "string"]),
    ("summarise missing metric", lambda: experiments.summarise(FRAME, ["f1"]), ValueError, ["'f1'", "column"]),
    (
        "summarise missing by",
        lambda: experiments.summarise(FRAME, ["nicv"], by=["algo"]),
        ValueError,
        ["'algo'", "column"],
    ),
    (
        "summarise metric not numeric",
        lambda: experiments.summarise(FRAME, ["dataset"]),
        TypeError,
        ["'dataset'", "numeric"],
    ),
    ("ledger paper", lambda: verdicts.Ledger(None), ValueError, ["paper", "None"]),
    (
        "ledger claim_id empty",
        lambda: verdicts.Ledger("p").add("", "c", 1, 1, "partly", artefact="F1"),
        ValueError,
        ["claim_id", "''"],
    ),
    (
        "ledger claim_id int",
        lambda: verdicts.Ledger("p").add(3, "c", 1, 1, "partly", artefact="F1"),
        ValueError,
        ["claim_id", "3"],
    ),
    ("ledger reading choice", lambda: verdicts.Ledger("p").primary("", "r", "s"), ValueError, ["choice", "''"]),
    (
        "ledger reading twice",
        lambda: [ledger.alternative("ch", "r", "s") for ledger in [verdicts.Ledger("p")] for _ in range(2)],
        ValueError,
        ["'r'", "'ch'", "already"],
    ),
    ("profile", lambda: experiments.resolve_profile("fast"), ValueError, ["profile", "'fast'"]),
    ("output_dirs profile", lambda: experiments.output_dirs("nb", "fast"), ValueError, ["profile", "'fast'"]),
    # ---- datasets
    ("load name", lambda: datasets.load("cars"), ValueError, ["name", "'cars'"]),
    ("load name None", lambda: datasets.load(None), ValueError, ["name", "None"]),
    ("load variant", lambda: datasets.load("car", "binary"), ValueError, ["variant", "'binary'"]),
    ("load variant int", lambda: datasets.load("car", 3), ValueError, ["variant", "3"]),
    ("load option n_samples", lambda: datasets.load("pytest_uniform", n_samples=0), ValueError, ["n_samples", "0"]),
    ("variants name", lambda: datasets.variants("cars"), ValueError, ["name", "'cars'"]),
    ("uniform n", lambda: datasets.make_uniform_square(0), ValueError, ["n_samples", "0"]),
    ("uniform n float", lambda: datasets.make_uniform_square(2.5), TypeError, ["n_samples", "2.5"]),
    ("uniform low > high", lambda: datasets.make_uniform_square(10, 1.0, 0.0), ValueError, ["low", "high", "1.0"]),
    (
        "uniform random_state",
        lambda: datasets.make_uniform_square(10, random_state=-1),
        ValueError,
        ["random_state", "-1"],
    ),
    # ---- plotting
    ("plot metric", lambda: _plot(metric="f1"), ValueError, ["metric", "'f1'"]),
    ("plot hue", lambda: _plot(hue="algo"), ValueError, ["hue", "algo"]),
    ("plot col", lambda: _plot(col="ds"), ValueError, ["col", "ds"]),
    ("plot style", lambda: _plot(style="ds"), ValueError, ["style", "ds"]),
    ("plot frame", lambda: _plot(frame=[1]), TypeError, ["frame", "DataFrame"]),
    ("plot empty", lambda: _plot(frame=FRAME.iloc[:0]), ValueError, ["frame", "empty"]),
    ("plot no epsilon", lambda: _plot(frame=FRAME.drop(columns="epsilon")), ValueError, ["'epsilon'", "column"]),
    ("plot metric not numeric", lambda: _plot(metric="dataset"), TypeError, ["metric", "numeric"]),
    ("plot reference", lambda: _plot(reference="x"), TypeError, ["reference", "'x'"]),
    ("plot logx eps 0", lambda: _plot(frame=FRAME.assign(epsilon=0.0), logx=True), ValueError, ["logx", "epsilon"]),
    ("figure name folder", lambda: plotting.figure_path("nb", "../x"), ValueError, ["name", "'../x'"]),
    ("save_figure fig", lambda: plotting.save_figure(None, "nb", "x"), TypeError, ["fig", "NoneType"]),
    # ---- the estimators' parameters at their limits: a list where a name is expected, and sizes past memory
    ("choice unhashable", lambda: _fit(DPKMeans(2, noise=["exact"])), ValueError, ["noise", "['exact']"]),
    ("choice dict", lambda: _fit(IDPKMeans(2, split={"a": 1})), ValueError, ["split", "{'a': 1}"]),
    ("n_clusters huge", lambda: _fit(IDPKMeans(10**30)), ValueError, ["n_clusters", "<= 1000000"]),
    ("max_iter huge", lambda: _fit(DPKMeans(2, max_iter=10**30)), ValueError, ["max_iter", "<= 1000000"]),
    ("epsilon past the noise grid", lambda: _fit(DPKMeans(2, epsilon=1e30)), ValueError, ["epsilon", "grid"]),
    ("grid_size huge", lambda: _fit(EUGKMeans(2, grid_size=10**7)), ValueError, ["grid_size", "cells"]),
    ("n_public past the grid", lambda: _fit(EUGKMeans(2, n_public=10**30)), ValueError, ["n_public", "cells"]),
    ("branching_factor huge", lambda: _fit(DPBirchPublicTree(2, branching_factor=10**30)), ValueError, ["branching"]),
    ("n_skeleton huge", lambda: _fit(DPBirchPublicTree(2, n_skeleton=10**30)), ValueError, ["n_skeleton"]),
    (
        "dpkmodes max_iter huge",
        lambda: DPKModes(2, max_iter=10**30, domain_sizes=(2, 2)).fit(X2),
        ValueError,
        ["max_iter", "<= 1000000"],
    ),
    ("bernoulli p", lambda: sample_bernoulli(1.5, np.random.default_rng(0)), ValueError, ["p must"]),
    ("exp_interval x", lambda: exp_interval(float("inf")), ValueError, ["x must"]),
]


def _fit(est):
    return est.set_params(bounds=(0.0, 1.0)).fit(XF)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_parameter_and_value(case):
    _, call, exc, words, *absent = case
    with pytest.raises(exc) as err:
        call()
    assert isinstance(err.value, (ValueError, TypeError, DataError, BudgetExceededError))
    message = str(err.value)
    for word in words:
        assert word in message, f"{word!r} missing from: {message}"
    for word in absent[0] if absent else []:
        assert word not in message, f"{word!r} (a private value) shown in: {message}"


def test_catalogue_is_large_enough():
    assert len(CASES) >= 70
    assert len({c[0] for c in CASES}) == len(CASES)
