"""Where the project keeps its data, results and figures."""
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = PROJECT_ROOT / "notebooks"
RESULTS_DIR = PROJECT_ROOT / "data" / "results"
PUBLISHED_DIR = PROJECT_ROOT / "data" / "published"
FIGURES_DIR = PROJECT_ROOT / "figures"
