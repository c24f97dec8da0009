"""The figure style and the checks every saved figure passes (dpclust.plotting)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from dpclust import plotting  # noqa: E402

FRAME = pd.DataFrame(
    {
        "algorithm": ["DPk-means"] * 4 + ["IDP k-means | fixed"] * 4,
        "dataset": ["D1", "D1", "D2", "D2"] * 2,
        "epsilon": [0.1, 1.0] * 4,
        "nicv": [0.5, 0.3, 0.6, 0.4, 0.55, 0.35, 0.65, 0.45],
    }
)


@pytest.mark.parametrize("label", ["nicv", "f_truth", "f_kmeans", "nicv_ratio", "AC_sex"])
def test_raw_column_names_are_refused_as_axis_labels(label):
    with pytest.raises(ValueError, match="raw column name"):
        plotting.check_label(label)
    with pytest.raises(ValueError, match="ylabel"):
        plotting.metric_vs_epsilon(FRAME.rename(columns={"nicv": label}), label)


@pytest.mark.parametrize("label", ["NICV", "F-measure against the classes", "privacy budget ε", "entropy E (nats)"])
def test_words_pass(label):
    assert plotting.check_label(label) == label


def test_seaborn_default_facet_titles_are_refused():
    with pytest.raises(ValueError, match="facet title"):
        plotting.check_label("dataset = D1", "panel title")
    fig, (ax,) = plotting.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="privacy budget ε", ylabel="NICV", title="panel = D1")
    with pytest.raises(ValueError, match="facet title"):
        plotting.check_figure(fig)
    plt.close(fig)


def _titled_figure():
    fig, (ax,) = plotting.subplots()
    ax.plot([0.1, 1.0], [0.5, 0.3], label="DPk-means")
    ax.set(xlabel="privacy budget ε", ylabel="NICV", title="NICV against ε")
    return fig, ax


def test_save_figure_refuses_a_figure_without_title_or_axis_label(tmp_path):
    fig, ax = _titled_figure()
    ax.set_title("")
    with pytest.raises(ValueError, match="no title"):
        plotting.save_figure(fig, "99_demo", "untitled", tmp_path)
    ax.set_title("NICV against ε")
    ax.set_ylabel("")
    with pytest.raises(ValueError, match="no y axis label"):
        plotting.save_figure(fig, "99_demo", "unlabelled", tmp_path)
    assert not list(tmp_path.iterdir())  # nothing written
    plt.close(fig)


def test_a_reference_line_must_be_named_in_the_legend(tmp_path):
    fig, ax = _titled_figure()
    ax.axhline(0.2, ls="--")  # unnamed
    plotting.finish_legend(fig)
    with pytest.raises(ValueError, match="reference line"):
        plotting.save_figure(fig, "99_demo", "unnamed_line", tmp_path)
    plt.close(fig)
    fig, ax = _titled_figure()
    plotting.reference_line(ax, 0.2, "non-private k-means")
    plotting.finish_legend(fig)
    path = plotting.save_figure(fig, "99_demo", "named_line", tmp_path)
    assert path.stat().st_size > 1000
    plt.close(fig)


def test_metric_vs_epsilon_draws_published_values_and_names_every_line():
    published = pd.DataFrame({"dataset": ["D1", "D1"], "epsilon": [0.1, 1.0], "value": [0.45, 0.25]})
    fig = plotting.metric_vs_epsilon(
        FRAME,
        "nicv",
        "NICV",
        col="dataset",
        reference={"D1": 0.2, "D2": 0.3},
        reference_label="non-private k-means",
        published=published,
        published_label="published (Fig. 2)",
        title="NICV against ε",
    )
    names = [t.get_text() for t in fig.legends[0].get_texts()]
    assert set(names) == {"DPk-means", "IDP k-means | fixed", "non-private k-means", "published (Fig. 2)"}
    d1, d2 = fig.axes[:2]
    assert [a.get_title() for a in (d1, d2)] == ["D1", "D2"]  # not "dataset = D1"
    stars = [line for line in d1.get_lines() if line.get_marker() == "*"]
    assert len(stars) == 1 and np.allclose(stars[0].get_ydata(), [0.45, 0.25])  # the published values as given
    assert not any(line.get_marker() == "*" for line in d2.get_lines())  # D2 has none
    plotting.check_figure(fig)
    plt.close(fig)


def test_the_mean_line_is_the_mean_of_the_runs():
    fig = plotting.metric_vs_epsilon(FRAME, "nicv", "NICV", hue="algorithm", errorbar=None, title="t")
    line = next(li for li in fig.axes[0].get_lines() if li.get_label() == "DPk-means")
    expected = FRAME[FRAME.algorithm == "DPk-means"].groupby("epsilon")["nicv"].mean()
    assert np.allclose(line.get_ydata(), expected.to_numpy())
    plt.close(fig)


def test_an_algorithm_has_the_same_colour_in_every_figure_and_variants_differ():
    alone = plotting.algorithm_colors(["IDPk-means"])["IDPk-means"]
    with_others = plotting.algorithm_colors(["DPQTk-means", "IDP k-means | fixed", "IDPk-means"])
    assert with_others["IDPk-means"] == alone
    assert with_others["IDP k-means | fixed"] != alone  # a variant: a shade of the family's colour
    many = plotting.algorithm_colors(["LDPK (paper)", "LDPK, split", "LDPK, split + GRR index", "DPK"])
    assert len(set(many.values())) == 4


def test_log_axis_only_over_a_decade():
    fig, (ax,) = plotting.subplots()
    ax.plot([0.1, 10.0], [1.0, 1.4])
    plotting.log_scale(ax, "x")
    plotting.log_scale(ax, "y")
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "linear")
    plt.close(fig)
