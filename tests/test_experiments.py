"""Sweeps, seeds, profiles, result tables and ledgers."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpclust_lib
from dpclust import experiments
from dpclust.datasets import make_uniform_square
from dpclust_lib.mechanisms import laplace_mechanism


class NoisyMean:
    """A tiny DP estimator for the tests: the Laplace-noised mean of data in [-2, 2]^2."""

    def __init__(self, epsilon, random_state):
        self.epsilon, self.random_state = epsilon, random_state

    def fit(self, X):
        self.mean_ = laplace_mechanism(X.mean(axis=0), 8.0 / len(X), self.epsilon, self.random_state)
        self.epsilon_spent_ = self.epsilon
        self.epsilon_guaranteed_ = self.epsilon
        return self


class WarnsAtFit(NoisyMean):
    def fit(self, X):
        warnings.warn("a warning raised inside the fit", UserWarning, stacklevel=2)
        return super().fit(X)


METRICS = {"error": lambda est, ds: float(np.abs(est.mean_ - ds.X.mean(axis=0)).sum())}


@pytest.fixture
def data():
    return make_uniform_square(200, random_state=0)


def test_sweep_returns_one_tidy_row_per_fit(data):
    df = experiments.sweep({"noisy mean": NoisyMean}, data, [0.1, 1.0], 3, METRICS, seed=5)
    assert list(df.columns) == [
        "algorithm",
        "dataset",
        "epsilon",
        "run",
        "seed",
        "error",
        "seconds",
        "epsilon_spent",
        "epsilon_guaranteed",
    ]
    assert len(df) == 6 and df["epsilon_spent"].tolist() == df["epsilon"].tolist()
    assert df["epsilon_guaranteed"].tolist() == df["epsilon"].tolist()
    # More privacy, more error: the sweep carries the signal.
    assert df[df.epsilon == 0.1]["error"].mean() > df[df.epsilon == 1.0]["error"].mean()


def test_same_seed_same_frame_also_in_parallel(data):
    kwargs = dict(algorithms={"a": NoisyMean}, datasets=data, epsilons=[0.5, 1.0], n_runs=4, metrics=METRICS, seed=11)
    one = experiments.sweep(**kwargs)
    again = experiments.sweep(**kwargs)
    two = experiments.sweep(n_jobs=2, **kwargs)
    cols = ["algorithm", "dataset", "epsilon", "run", "seed", "error", "epsilon_spent"]
    pd.testing.assert_frame_equal(one[cols], again[cols])
    pd.testing.assert_frame_equal(one[cols], two[cols])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_callers_warning_filters_apply_in_every_worker(data, n_jobs):
    # A worker process starts with default filters; the sweep hands it the caller's.
    kwargs = dict(algorithms={"w": WarnsAtFit}, datasets=data, epsilons=[1.0], n_runs=2, metrics=METRICS, n_jobs=n_jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with pytest.raises(UserWarning, match="inside the fit"):
            experiments.sweep(**kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore", UserWarning)
        experiments.sweep(**kwargs)
    assert not caught


class CountsPredictions(NoisyMean):
    def predict(self, X):
        self.predictions = getattr(self, "predictions", 0) + 1
        return np.full(len(X), self.random_state)  # labels that tell the fits apart


SHARED = {  # two metrics that read the fit's labels, and the number of predictions made once both have
    "label": lambda est, ds: experiments.fit_labels(est, ds)[0],
    "label_again": lambda est, ds: experiments.fit_labels(est, ds)[-1],
    "predictions": lambda est, ds: est.predictions,
}


@pytest.mark.parametrize("n_jobs, backend", [(1, None), (2, None), (4, "threading")])
def test_what_the_metrics_of_a_fit_share_is_computed_once_for_that_fit_alone(data, n_jobs, backend):
    frame = experiments.sweep({"a": CountsPredictions}, data, [0.5, 1.0], 4, SHARED, n_jobs=n_jobs, backend=backend)
    assert (frame["predictions"] == 1).all()
    assert (frame["label"] == frame["seed"]).all() and (frame["label_again"] == frame["seed"]).all()
    assert not experiments._PER_FIT  # nothing kept once the sweep is done
    est = CountsPredictions(1.0, 7).fit(data.X)
    experiments.fit_labels(est, data), experiments.fit_labels(est, data)
    assert est.predictions == 2  # outside a sweep's metrics, nothing is kept


def test_a_fits_seed_does_not_depend_on_the_rest_of_the_grid(data):
    wide = experiments.sweep({"a": NoisyMean}, data, [0.1, 0.5, 1.0], 2, METRICS, seed=3)
    narrow = experiments.sweep({"a": NoisyMean}, data, [1.0], 2, METRICS, seed=3)
    pd.testing.assert_frame_equal(
        wide[wide.epsilon == 1.0][["seed", "error"]].reset_index(drop=True), narrow[["seed", "error"]]
    )


def test_seeds_differ_across_runs_and_epsilons_and_are_shared_by_algorithms(data):
    df = experiments.sweep({"a": NoisyMean, "b": NoisyMean}, data, [0.5, 1.0], 3, METRICS, seed=0)
    a, b = df[df.algorithm == "a"], df[df.algorithm == "b"]
    assert a["seed"].nunique() == 6
    assert a["seed"].tolist() == b["seed"].tolist()


def test_fit_seed_is_stable():
    assert experiments.fit_seed(0, 1.0, 0) == experiments.fit_seed(0, 1.0, 0)
    assert experiments.fit_seed(0, 1.0, 0) != experiments.fit_seed(1, 1.0, 0)


def test_summarise(data):
    df = experiments.sweep({"a": NoisyMean}, data, [1.0], 5, METRICS, seed=0)
    s = experiments.summarise(df, ["error"])
    assert s.loc[0, "count"] == 5 and np.isclose(s.loc[0, "mean"], df["error"].mean())
    assert np.isclose(s.loc[0, "ci95"], 1.96 * df["error"].std() / np.sqrt(5))


def test_profiles(monkeypatch):
    monkeypatch.setenv("DPCLUST_PROFILE", "smoke")
    assert experiments.resolve_profile().name == "smoke"
    assert experiments.resolve_profile("paper").pick(paper=50, smoke=2) == 50
    monkeypatch.delenv("DPCLUST_PROFILE")
    assert experiments.resolve_profile().is_paper


def test_save_results_writes_the_table(tmp_path):
    path = experiments.save_results(pd.DataFrame({"x": [1]}), "99_demo", "table", results_dir=tmp_path)
    assert path == tmp_path / "table.csv" and path.is_file()
    assert pd.read_csv(path)["x"].tolist() == [1]


@pytest.mark.parametrize(
    "call, exc, needle",
    [
        (lambda d: experiments.resolve_profile("full"), ValueError, "profile"),
        (lambda d: experiments.sweep({}, d, [1.0], 1, METRICS), TypeError, "algorithms"),
        (lambda d: experiments.sweep({"a": NoisyMean}, d, [1.0], 0, METRICS), ValueError, "n_runs"),
        (lambda d: experiments.sweep({"a": NoisyMean}, d, [], 1, METRICS), ValueError, "epsilons"),
        (lambda d: experiments.sweep({"a": NoisyMean}, d.X, [1.0], 1, METRICS), TypeError, "datasets"),
        (lambda d: experiments.sweep({"a": NoisyMean}, d, [1.0], 1, None), TypeError, "metrics"),
        (lambda d: experiments.fit_seed(-1, 1.0, 0), ValueError, "seed"),
    ],
)
def test_experiments_bad_input(data, call, exc, needle):
    with pytest.raises(exc, match=needle):
        call(data)


def test_output_dirs_keep_smoke_runs_apart(tmp_path, monkeypatch):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    monkeypatch.setenv("DPCLUST_HOME", str(tmp_path))
    results, figures = tmp_path.resolve() / "data" / "results", tmp_path.resolve() / "figures"
    monkeypatch.delenv(experiments.OUTPUT_ENV, raising=False)
    # Only reproduce writes the committed folders: a paper-profile run it did not start writes scratch ones.
    assert experiments.output_dirs("01_x", "paper") == (results / "scratch" / "01_x", figures / "scratch" / "01_x")
    assert experiments.target_dirs("01_x", "paper") == (results / "01_x", figures / "01_x")
    assert experiments.output_dirs("01_x", "smoke") == (results / "smoke" / "01_x", figures / "smoke" / "01_x")
    assert experiments.results_path("01_x", "t") == results / "01_x" / "t.csv"
    assert experiments.output_dirs("01_x", "smoke", "/r", "/f") == (Path("/r"), Path("/f"))


def test_output_dirs_need_no_compendium_when_both_are_given(tmp_path, monkeypatch):
    # An exported assignment runs in a folder outside the compendium and passes both folders.
    from dpclust._paths import CompendiumNotFoundError

    monkeypatch.setenv("DPCLUST_HOME", str(tmp_path / "nowhere"))
    monkeypatch.delenv(experiments.OUTPUT_ENV, raising=False)
    assert experiments.output_dirs("01_x", "paper", "r", "f") == (Path("r"), Path("f"))
    with pytest.raises(CompendiumNotFoundError):  # one folder missing: its default needs the compendium
        experiments.output_dirs("01_x", "paper", "r", None)
    with pytest.raises(ValueError, match="profile"):  # the profile is still checked
        experiments.output_dirs("01_x", "fast", "r", "f")


def test_metric_vs_epsilon_figure_is_saved(data, tmp_path):
    from dpclust import plotting

    df = experiments.sweep({"a": NoisyMean, "b": NoisyMean}, data, [0.1, 1.0], 3, METRICS, seed=0)
    fig = plotting.metric_vs_epsilon(df, "error", "error of the mean", logx=True, reference=0.0, title="demo")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and len(ax.get_legend_handles_labels()[1]) >= 2
    path = plotting.save_figure(fig, "99_demo", "error", figures_dir=tmp_path)
    assert path == tmp_path / "error.png" and path.stat().st_size > 1000
    with pytest.raises(ValueError, match="metric='nicv'"):
        plotting.metric_vs_epsilon(df, "nicv")


def test_sweep_on_a_dask_cluster_gives_the_same_frame(data):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is the optional [dask] extra")
    kwargs = dict(algorithms={"a": NoisyMean}, datasets=data, epsilons=[0.5, 1.0], n_runs=3, metrics=METRICS, seed=2)
    local = experiments.sweep(**kwargs)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        remote = experiments.sweep(backend="dask", n_jobs=-1, **kwargs)
    cols = ["algorithm", "dataset", "epsilon", "run", "seed", "error", "epsilon_spent"]
    pd.testing.assert_frame_equal(local[cols], remote[cols])


def test_sweep_records_what_a_leaky_setting_guarantees(data):
    from dpclust_lib import DPKMeans

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpclust_lib.PrivacyLeakWarning)
        df = experiments.sweep(
            {
                "declared": lambda e, rs: DPKMeans(2, epsilon=e, bounds=(-2.0, 2.0), random_state=rs),
                "bounds from data": lambda e, rs: DPKMeans(2, epsilon=e, bounds="data", random_state=rs),
            },
            data,
            [0.5],
            2,
            {},
        )
    by = df.set_index("algorithm")
    assert (by.loc["declared", "epsilon_guaranteed"] == 0.5).all()
    assert np.isinf(by.loc["bounds from data", "epsilon_guaranteed"]).all()
    assert (df["epsilon_spent"] == 0.5).all()  # the arithmetic spends the same in both


class _Shell:
    """The one attribute of an IPython shell that skip_rest_of_notebook touches."""

    def __init__(self):
        self.input_transformers_post = []


def test_skip_rest_of_notebook_silences_later_cells_but_never_in_a_graded_assignment(monkeypatch):
    import IPython

    shell = _Shell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    monkeypatch.delenv("DPCLUST_GRADED", raising=False)
    experiments.skip_rest_of_notebook("no data")
    [transform] = shell.input_transformers_post
    assert transform(["print('a later cell')\n"]) == []  # every later cell runs nothing
    # In an exported nbgrader assignment a skipped check cell would count as passed: it stops with an error.
    graded = _Shell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: graded)
    monkeypatch.setenv("DPCLUST_GRADED", "1")
    with pytest.raises(RuntimeError, match="no data; a graded assignment runs every cell"):
        experiments.skip_rest_of_notebook("no data")
    assert graded.input_transformers_post == []
