"""The verdict rules (verdicts) and confidence intervals (experiments), against hand-computed values."""

import numpy as np
import pytest

from dpclust import experiments, verdicts


def test_mean_ci95_uses_student_t():
    mean, half = experiments.mean_ci95([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert half == pytest.approx(4.302652729911275 / np.sqrt(3))  # t_{0.975, 2} from tables, sd = 1
    assert np.isnan(experiments.mean_ci95([1.0])[1])


def test_verdict_by_gap():
    assert verdicts.verdict_by_gap([0.5, 0.61], [0.5, 0.6]) == ("reproduced", pytest.approx(0.01))
    assert verdicts.verdict_by_gap([0.5, 0.7], [0.54, 0.6])[0] == "partly"
    assert verdicts.verdict_by_gap([0.5, 0.7], [0.54, 0.6], partly_share=1.0)[0] == "not reproduced"
    assert verdicts.verdict_by_gap([0.9, 0.7], [0.5, 0.6])[0] == "not reproduced"
    with pytest.raises(ValueError):
        verdicts.verdict_by_gap([np.nan], [0.5])


def test_verdict_by_share_and_rises_with():
    assert verdicts.verdict_by_share([True, True]) == "reproduced"
    assert verdicts.verdict_by_share([True, False]) == "partly"
    assert verdicts.verdict_by_share([False]) == "not reproduced"
    assert experiments.rises_with([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6])[0]
    assert not experiments.rises_with([1, 2, 3], [5, 5, 5])[0]
    assert not experiments.rises_with([1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1])[0]


def test_verdict_by_share_reads_a_generator_case_by_case():
    assert verdicts.verdict_by_share(x > 1 for x in [0, 1, 2]) == "partly"
    assert verdicts.verdict_by_share(x > 5 for x in [0, 1, 2]) == "not reproduced"
    assert verdicts.verdict_by_share(iter([])) == "not run"


def test_new_rules_run_their_examples():
    import doctest

    names = ["paired_bootstrap", "homogeneity_pvalue", "fit_seconds"]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for name in names:
        for test in doctest.DocTestFinder().find(
            getattr(experiments, name), name, globs={"np": np, **vars(experiments)}
        ):
            runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


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
    assert verdicts.verdict_by_tests(reproduced, partly, testable) == verdict


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
    assert verdicts.verdict_by_shares(shares) == verdict


def test_verdict_by_shares_of_a_whole_grid():
    # Fig. 3 style: "reproduced" only if ahead at every epsilon, "partly" at half of them
    assert verdicts.verdict_by_shares([13 / 13], reproduced_at=1.0) == "reproduced"
    assert verdicts.verdict_by_shares([12 / 13], reproduced_at=1.0) == "partly"
    assert verdicts.verdict_by_shares([6 / 13], reproduced_at=1.0) == "not reproduced"


def test_verdict_by_intervals_counts_against_the_share():
    # 13 intervals, share 10/13: ten wholly above 0 and none below reproduce; nine do not
    low = np.array([0.1] * 10 + [-0.1] * 3)
    assert verdicts.verdict_by_intervals(low, low + 0.5, share=10 / 13) == ("reproduced", 10, 0)
    low[0] = -0.1
    assert verdicts.verdict_by_intervals(low, low + 0.5, share=10 / 13) == ("partly", 9, 0)
    # one interval wholly below is enough to stop "reproduced", whatever the count above
    low, high = np.array([0.1] * 12 + [-0.9]), np.array([0.5] * 12 + [-0.5])
    assert verdicts.verdict_by_intervals(low, high, share=10 / 13) == ("partly", 12, 1)
    # at least one interval must lie above, even where share * n rounds to 0
    assert verdicts.verdict_by_intervals([-0.1], [0.1], share=0.4) == ("not reproduced", 0, 0)


def test_verdict_by_intervals_bad_input():
    with pytest.raises(ValueError, match="one length"):
        verdicts.verdict_by_intervals([0.1, 0.2], [0.3])
    with pytest.raises(ValueError, match="share"):
        verdicts.verdict_by_intervals([0.1], [0.3], share=0.0)


def _family_intervals(effects, level):
    # one paired t-interval per cell of the runs' effects (cells x runs), at the given level
    return np.array([experiments.t_interval(cell, level)[1:] for cell in effects]).T


def test_family_level_keeps_a_null_effect_on_one_side_rarely_over_many_cells():
    # 200 grids of 20 cells of 30 runs with no effect: read at the pointwise 95% level, some interval lies wholly
    # above 0 in about 1 - 0.975^20 = 40% of the grids; at the family-wise level, in at most about 5%
    rng = np.random.default_rng(2)
    level = verdicts.family_level(20)
    assert level == pytest.approx(0.9975)
    hits = {0.95: 0, level: 0}
    for _ in range(200):
        effects = rng.normal(0.0, 1.0, size=(20, 30))
        for lv in hits:
            hits[lv] += bool((_family_intervals(effects, lv)[0] > 0).any())
    assert hits[0.95] >= 50 and hits[level] <= 20
    with pytest.raises(ValueError, match="n must be"):
        verdicts.family_level(0)


def test_equivalence_cells_need_a_tight_interval_not_a_near_estimate():
    # twelve cells with no difference at all: with 4 noisy runs each, every interval (family-wise) straddles the
    # margin, so no cell is close, though most estimates lie within it; with 30 quiet runs, every cell is close
    rng = np.random.default_rng(5)
    level = verdicts.family_level(12)
    noisy = rng.normal(0.0, 0.3, size=(12, 4))
    low, high = _family_intervals(noisy, level)
    assert (np.abs(noisy.mean(axis=1)) <= 0.25).mean() >= 0.5  # the means alone would read "close"
    assert set(verdicts.equivalence_cells(low, high, 0.25)) == {"undecided"}
    assert verdicts.verdict_by_shares([(verdicts.equivalence_cells(low, high, 0.25) == "close").mean()]) == (
        "not reproduced"
    )
    quiet = rng.normal(0.0, 0.05, size=(12, 30))
    low, high = _family_intervals(quiet, level)
    assert set(verdicts.equivalence_cells(low, high, 0.25)) == {"close"}
    # a true difference of 1 with the same quiet runs: every cell apart, on either side
    for shift in (1.0, -1.0):
        low, high = _family_intervals(quiet + shift, level)
        assert set(verdicts.equivalence_cells(low, high, 0.25)) == {"apart"}


def test_equivalence_cells_with_a_range_and_bad_input():
    # a claimed range [0.10, 0.25]: inside, straddling its lower end, wholly below it, wholly above it
    calls = verdicts.equivalence_cells([0.12, 0.05, 0.0, 0.3], [0.2, 0.15, 0.09, 0.4], (0.10, 0.25))
    assert calls.tolist() == ["close", "undecided", "apart", "apart"]
    with pytest.raises(ValueError, match="margin"):
        verdicts.equivalence_cells([0.0], [0.1], 0.0)
    with pytest.raises(ValueError, match="margin"):
        verdicts.equivalence_cells([0.0], [0.1], (0.25, 0.10))
    with pytest.raises(ValueError, match="one length"):
        verdicts.equivalence_cells([0.0, 0.1], [0.1], 0.25)


# ---- replicates: a verdict over independent draws


@pytest.mark.parametrize(
    "draws, expected",
    [
        (["reproduced"] * 5, ("reproduced", "5 of 5")),
        ("partly", ("partly", "1 of 1")),
        (["partly", "reproduced", "reproduced"], ("unstable", "2 of 3 reproduced, 1 partly")),
        (
            ["not reproduced", "partly", "reproduced", "partly"],
            ("unstable", "2 of 4 partly, 1 reproduced, 1 not reproduced"),
        ),
        (["not run"] * 3, ("not run", "3 of 3")),
    ],
)
def test_combine_is_unanimous_or_unstable(draws, expected):
    assert verdicts.combine(draws) == expected


@pytest.mark.parametrize("draws", [[], ["confirmed"], ["unstable"], [None]])
def test_combine_refuses_what_is_not_one_draw(draws):
    with pytest.raises(ValueError, match="draws"):
        verdicts.combine(draws)


# ---- the ledger: primary readings first, sensitivity beside, one row per artefact


def _ledger(**kwargs):
    ledger = verdicts.Ledger("Demo et al.", "99_demo", **kwargs)
    ledger.primary("DS1 stand-in", "Iris", "Sec. 5: a small UCI data set")
    ledger.alternative("DS1 stand-in", "Wine", "Sec. 5: a small UCI data set")
    ledger.alternative("DS1 stand-in", "Abalone", "Sec. 5", added_after_results=True)
    return ledger


def test_primary_readings_come_before_any_claim_and_return_what_runs():
    ledger = verdicts.Ledger("Demo et al.")
    assert ledger.primary("N", "N = 5", "Sec. 4: N is not given", value=5) == 5
    assert ledger.primary_reading("N") == "N = 5"
    with pytest.raises(ValueError, match="already has a primary"):
        ledger.primary("N", "N = 10", "Sec. 4")
    ledger.add("c1", "a claim", "Fig. 1", "ours", "partly", artefact="Fig. 1", uses="N")
    with pytest.raises(ValueError, match="before grading"):
        ledger.primary("label", "income", "Sec. 5")
    with pytest.raises(ValueError, match="no primary reading"):
        ledger.add("c2", "a claim", "Fig. 2", "ours", "partly", artefact="Fig. 2", uses="label")


def test_one_row_per_artefact_and_the_coverage_names_every_artefact():
    ledger = _ledger()
    ledger.add("fig3", "IDP above DP", "Fig. 3", "ahead at 13/13", "reproduced", artefact=["Fig. 3", "Fig. 4"])
    with pytest.raises(ValueError, match="'Fig. 3' is already graded"):
        ledger.add("fig3b", "IDP above DP again", "Fig. 3", "", "partly", artefact="Fig. 3")
    ledger.cover("Table 2", "its values are not in the text")
    with pytest.raises(ValueError, match="already graded or covered"):
        ledger.cover("Fig. 4", "graded already")
    coverage = ledger.coverage_frame()
    assert coverage.values.tolist() == [
        ["Fig. 3", "fig3", "reproduced", ""],
        ["Fig. 4", "fig3", "reproduced", ""],
        ["Table 2", "", "", "its values are not in the text"],
    ]


def test_sensitivity_is_beside_the_primary_verdict_and_never_counted(tmp_path):
    ledger = _ledger()
    ledger.add(
        "idp", "IDP above DP", "Fig. 3", "ahead", ["reproduced", "partly"], artefact="Fig. 3", uses="DS1 stand-in"
    )
    ledger.sensitivity("idp", "DS1 stand-in", "Wine", ["reproduced", "reproduced"], ours="ahead")
    ledger.sensitivity("idp", "DS1 stand-in", "Abalone", ["partly", "reproduced"])
    with pytest.raises(ValueError, match="not an alternative"):
        ledger.sensitivity("idp", "DS1 stand-in", "Iris", "reproduced")  # the primary reading itself
    with pytest.raises(ValueError, match="not an alternative"):
        ledger.sensitivity("idp", "DS1 stand-in", "Letter", "reproduced")  # never declared
    with pytest.raises(ValueError, match="not in the ledger"):
        ledger.sensitivity("nope", "DS1 stand-in", "Wine", "reproduced")
    row = ledger.frame().iloc[0]
    assert (row["verdict"], row["replicates"], row["reading"]) == (
        "unstable",
        "1 of 2 reproduced, 1 partly",
        "DS1 stand-in: Iris",
    )
    sens = ledger.sensitivity_frame()
    assert sens[["reading", "verdict", "changes"]].values.tolist() == [
        ["Wine", "reproduced", "unstable -> reproduced"],
        ["Abalone", "unstable", "same verdict"],
    ]
    readings = ledger.readings_frame().set_index("reading")
    assert readings.loc["Iris", "used_for"] == "idp" and readings.loc["Iris", "primary"]
    assert readings.loc["Abalone", "added_after_results"] and not readings.loc["Wine", "added_after_results"]
    ledger.save(tmp_path / "99_demo")
    counts = verdicts.verdict_counts(verdicts.read_ledgers(["99_demo"], tmp_path))
    assert counts.loc["99_demo", "claims"] == 1 and counts.loc["99_demo", "unstable"] == 1  # Wine's verdict is not


def test_the_stability_run_adds_the_draws_at_other_seeds_only(tmp_path):
    runs = {}
    for seed, (draw, wine) in enumerate([("reproduced", "partly"), ("partly", "partly"), ("reproduced", "partly")]):
        ledger = _ledger(seed=seed)
        ledger.add("idp", "IDP above DP", "Fig. 3", "", draw, artefact="Fig. 3", uses="DS1 stand-in")
        ledger.sensitivity("idp", "DS1 stand-in", "Wine", wine)
        runs[seed] = tmp_path / f"seed{seed}"
        ledger.save(runs[seed])
    notebook = tmp_path / "99_demo.ipynb"
    notebook.write_text('{"cells": [{"cell_type": "code", "source": ["x = 1"]}]}')
    table = verdicts.replicate_table(runs, notebook)
    assert table["seed"].tolist() == [0, 0, 1, 1, 2, 2]
    assert table["reading"].tolist()[:2] == ["", "DS1 stand-in: Wine"]
    # A rerun at seed 0 counts its own draw once: seeds 1 and 2 come from the table.
    rerun = _ledger(seed=0, replicates=table)
    rerun.add("idp", "IDP above DP", "Fig. 3", "", "reproduced", artefact="Fig. 3", uses="DS1 stand-in")
    rerun.sensitivity("idp", "DS1 stand-in", "Wine", "partly")
    assert rerun.frame()[["verdict", "replicates"]].values.tolist() == [["unstable", "2 of 3 reproduced, 1 partly"]]
    assert rerun.sensitivity_frame()[["verdict", "replicates"]].values.tolist() == [["partly", "3 of 3"]]
    # Another root seed adds a fourth replicate.
    other = _ledger(seed=7, replicates=table)
    other.add("idp", "IDP above DP", "Fig. 3", "", "reproduced", artefact="Fig. 3", uses="DS1 stand-in")
    assert other.frame()["replicates"].tolist() == ["3 of 4 reproduced, 1 partly"]
    (tmp_path / "results" / "99_demo").mkdir(parents=True)
    table.to_csv(tmp_path / "results" / "99_demo" / "replicates.csv", index=False)
    loaded = verdicts.load_replicates("99_demo", "paper", tmp_path / "results")
    assert loaded["run_verdicts"].tolist() == table["run_verdicts"].tolist()
    assert verdicts.load_replicates("99_demo", "smoke", tmp_path / "results").empty


def test_a_verdict_box_says_what_the_figure_decided():
    ledger = _ledger()
    ledger.add("idp", "IDP above DP.", "Fig. 3", "", ["reproduced"] * 3, artefact="Fig. 3", uses="DS1 stand-in")
    text = ledger.box("idp")._repr_markdown_()
    assert text == "> **Fig. 3: IDP above DP.** Verdict: **reproduced** (3 of 3). Primary reading: DS1 stand-in: Iris."


@pytest.mark.parametrize(
    "call, exc, needle",
    [
        (lambda: verdicts.Ledger("p").add("c1", "c", 1, 1, "ok", artefact="Fig. 1"), ValueError, "verdict"),
        (lambda: verdicts.Ledger("p").add("c1", "c", 1, 1, "partly", artefact=""), ValueError, "artefact"),
        (lambda: verdicts.Ledger("p").add("c1", "c", 1, 1, [], artefact="Fig. 1"), ValueError, "verdict"),
        (lambda: verdicts.Ledger("p", seed="0"), TypeError, "seed"),
        (lambda: verdicts.Ledger("p").cover("Fig. 1", ""), ValueError, "why_no_row"),
        (lambda: verdicts.Ledger("p").summarise(""), ValueError, "text"),
        (lambda: verdicts.Ledger("p").box("c1"), ValueError, "claim_id='c1'"),
        (lambda: verdicts.Ledger("p").alternative("c", "r", "s", added_after_results="no"), TypeError, "added_after"),
        (lambda: verdicts.read_ledgers(["01"], table="ledgers"), ValueError, "table"),
    ],
)
def test_ledger_bad_input(call, exc, needle):
    with pytest.raises(exc, match=needle):
        call()


# ---- the README's table: the ledgers' own counts


def test_update_readme_writes_the_counts_between_its_markers_only(tmp_path):
    ledger = _ledger()
    ledger.add("a", "claim a", "Fig. 1", "", "reproduced", artefact="Fig. 1")
    ledger.add("b", "claim b", "Fig. 2", "", ["partly", "reproduced"], artefact="Fig. 2")
    ledger.add("c", "A is faster", "Table 3", "", "reproduced", artefact="Table 3", timing=True)
    ledger.summarise("Two of three hold.").save(tmp_path / "99_demo")
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n{verdicts.README_START}\nstale\n{verdicts.README_END}\nafter\n")
    assert verdicts.update_readme(readme, ["99_demo"], tmp_path)
    text = readme.read_text()
    assert text.startswith("# Title\n\nbefore\n") and text.endswith(f"{verdicts.README_END}\nafter\n")
    assert "| [Demo et al.](notebooks/99_demo.ipynb) | 3 | 1 | 0 | 0 | 1 | 0 | 0 | 1 |" in text  # claims: all three
    assert "- **Demo et al.** Two of three hold." in text and "stale" not in text
    assert not verdicts.update_readme(readme, ["99_demo"], tmp_path)  # nothing to change the second time
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="markers"):
        verdicts.update_readme(readme, ["99_demo"], tmp_path)


def test_a_rerun_at_another_seed_joins_the_committed_replicates(tmp_path):
    def run(folder, seed, draw, wine, replicates=None):
        ledger = _ledger(seed=seed, replicates=replicates)
        ledger.add("idp", "IDP above DP", "Fig. 3", "", draw, artefact="Fig. 3", uses="DS1 stand-in")
        ledger.sensitivity("idp", "DS1 stand-in", "Wine", wine)
        ledger.save(folder)

    stab = {seed: tmp_path / f"stab{seed}" for seed in (1, 2)}
    for seed, folder in stab.items():
        run(folder, seed, "reproduced", "partly")
    notebook = tmp_path / "99_demo.ipynb"
    notebook.write_text('{"cells": [{"cell_type": "code", "source": ["x = 1"]}]}')
    committed = tmp_path / "results" / "99_demo"
    committed.mkdir(parents=True)
    table = verdicts.replicate_table(stab, notebook)
    table.to_csv(committed / "replicates.csv", index=False)
    run(committed, 0, "reproduced", "partly", replicates=table)  # the committed run: 3 of 3 either way
    for seed, draw, survives in [(7, "reproduced", True), (8, "partly", False)]:
        rerun = tmp_path / f"rerun{seed}" / "99_demo"
        run(rerun, seed, draw, "partly", replicates=table)
        found = verdicts.rerun_headlines(committed, rerun, notebook)
        assert found["committed"].tolist() == ["reproduced", "partly"]
        assert found["survives"].tolist() == [survives, True]
    with pytest.raises(ValueError, match="committed root seed"):
        verdicts.rerun_headlines(committed, committed)
    notebook.write_text('{"cells": [{"cell_type": "code", "source": ["x = 2"]}]}')
    with pytest.raises(ValueError, match="other code"):
        verdicts.rerun_headlines(committed, tmp_path / "rerun7" / "99_demo", notebook)
