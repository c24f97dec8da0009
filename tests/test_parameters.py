"""The notebooks check their own parameters (dpclust.parameters, in the cell after the parameters cell): plain
papermill shows each parameter's type and meaning, and a bad value stops the run at that cell with an error naming
the parameter. (Plain papermill runs on a number and on a list, in the reader's install: tests/test_lock.py.)"""

import subprocess
import sys
from pathlib import Path

import pytest

from dpclust import parameters
from dpclust.parameters import NonZeroInt, Optional, PositiveFloats, PositiveInt, Profile

ROOT = Path(__file__).resolve().parents[1]
PAPERMILL = Path(sys.executable).parent / "papermill"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize(
    "annotation, value, expected",
    [
        (Optional[PositiveFloats], 1.0, [1.0]),  # papermill -p epsilons 1.0
        (Optional[PositiveFloats], 2, [2.0]),
        (Optional[PositiveFloats], "[0.5, 2]", [0.5, 2.0]),  # papermill -p epsilons [0.5,2] passes a string
        (Optional[PositiveFloats], (0.5, 1), [0.5, 1.0]),
        (Optional[PositiveFloats], None, None),
        (PositiveInt, 3, 3),
        (NonZeroInt, -1, -1),
        (Profile, "smoke", "smoke"),
    ],
)
def test_a_value_becomes_what_the_notebook_uses(annotation, value, expected):
    assert parameters.convert("x", value, annotation) == expected


@pytest.mark.parametrize(
    "annotation, value, needle",
    [
        (Optional[PositiveFloats], [0.5, -1], "x=[0.5, -1] must be a list of numbers > 0"),
        (Optional[PositiveFloats], [], "an empty list"),
        (Optional[PositiveFloats], "0.5;1", "not a list of numbers"),
        (Optional[PositiveFloats], [True], "not a finite number"),
        (PositiveFloats, None, "None is not allowed"),
        (PositiveInt, 2.5, "not an integer"),
        (PositiveInt, 0, "not ≥ 1"),
        (NonZeroInt, 0, "not ≠ 0"),
        (Profile, "full", 'x=\'full\' must be "paper" or "smoke"'),
    ],
)
def test_a_bad_value_is_an_error_naming_the_parameter(annotation, value, needle):
    with pytest.raises(ValueError, match="notebook parameter x=") as caught:
        parameters.convert("x", value, annotation)
    assert needle in str(caught.value)


def test_check_converts_the_declared_values_in_place():
    namespace = {"__annotations__": {"epsilons": Optional[PositiveFloats], "seed": PositiveInt}, "epsilons": 0.5}
    namespace["seed"] = 1
    parameters.check(namespace)
    assert namespace["epsilons"] == [0.5] and namespace["seed"] == 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_papermill_shows_each_parameters_type_and_meaning(path):
    shown = subprocess.run([PAPERMILL, "--help-notebook", path], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.split("Parameters inferred for notebook")[1].strip().splitlines()[1:]
    unknown = [line for line in lines if "Unknown type" in line]
    assert not unknown, unknown
    assert "results_dir: Optional[Folder] (default None)" in shown.stdout
    assert "seed: NonNegativeInt (default 0)" in shown.stdout and "root seed of every random choice" in shown.stdout


@pytest.mark.parametrize(
    "args, needle",
    [
        (["-p", "max_iter", "abc"], "notebook parameter max_iter='abc' must be an integer ≥ 1"),
        (["-p", "epsilons", "[0.5,-1]"], "notebook parameter epsilons='[0.5,-1]' must be a list of numbers > 0"),
    ],
)
def test_plain_papermill_stops_a_bad_value_at_the_check_naming_it(tmp_path, args, needle):
    notebook = ROOT / "notebooks" / "04_idp_kmeans.ipynb"
    out = tmp_path / "out.ipynb"
    run = [PAPERMILL, notebook, out, "-p", "profile", "smoke", "-p", "results_dir", str(tmp_path), *args]
    result = subprocess.run([*run, "-p", "figures_dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode != 0 and needle in result.stderr, result.stderr[-2000:]
    assert not any(tmp_path.glob("*.csv")), "a table was written before the check"
