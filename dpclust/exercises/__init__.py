"""Checkers for the notebooks' graded exercises.

Each ``check_*`` function takes the student's function (or answer) and tests
it: an implement exercise against the library, the others against the right
answers of their public cases, which the modules hold as data (no function of
this package computes them: the tests derive them independently). When the
answer is right it prints a short confirmation (and returns None); when it is
not, it raises :class:`ExerciseError` with what was expected, what came back and
a hint. The notebooks' checkers also take a ``seed``: a graded run (:mod:`dpclust.grade`)
checks other cases, drawn from a seed the students never see, and takes the
answers the library does not give from the teacher's solutions (``solutions``).
Randomised code is checked against its exact output distribution, with a
chi-square test (finite outputs) or a Kolmogorov-Smirnov test (Laplace noise),
at a stated family-wise error rate (a correct solution is wrongly rejected at
most that often, for the fixed seeds used here); numbers are checked to a
stated tolerance.

The generic checkers, for any notebook, are in :mod:`._core`:
:func:`check_function` (a function against a reference on a list of cases,
recognising typical wrong answers), :func:`check_sampler` (draws of a
continuous mechanism against its exact CDF), :func:`check_number` and
:func:`check_prediction` (predict-then-run), and :func:`reference_inputs`
(the right answers of the exercises a dependent one builds on, lent while it runs). The others check one
piece of a paper's protocol, one module per notebook:
:mod:`.ldpk_modes` (01, Peng et al.), :mod:`.sampling_kmodes` (02, Zhang et
al.), :mod:`.dpqt_kmeans` (03, Zhang & Cheng), :mod:`.idp_kmeans` (04, Li et
al.), :mod:`.dp_birch` (05, Wang et al.) and :mod:`.lsh_coreset` (06, Chang et
al.; Google's LSH clustering). Every checker is available here as
``exercises.check_...``.
"""

from . import dp_birch, dpqt_kmeans, idp_kmeans, ldpk_modes, lsh_coreset, sampling_kmodes
from ._core import (
    ALPHA,
    ExerciseError,
    check_function,
    check_number,
    check_prediction,
    check_sampler,
    reference_inputs,
)
from .dp_birch import (
    check_cf_sensitivities,
    check_clustering_feature,
    check_dpbirch_insertion_epsilon,
    check_dpbirch_noisy_update,
    check_public_tree_leaf_noise,
    check_replacement_sensitivities,
)
from .dpqt_kmeans import (
    check_dpqt_epsilon_spent,
    check_eug_grid_size,
    check_quadtree_level,
    check_reach_probability,
    check_split_probability,
)
from .idp_kmeans import (
    check_gaussian_sigma,
    check_idp_initial_centres,
    check_noisy_sums_counts,
    check_release_scale,
    check_total_spent,
)
from .ldpk_modes import (
    check_grr_perturb,
    check_hamming_rr_expected_distance,
    check_hamming_rr_ldp_level,
    check_hamming_rr_perturb,
    check_ldpfo_estimate,
    check_ldpfo_variance,
)
from .lsh_coreset import check_lsh_noise_scales, check_zcdp_epsilon
from .sampling_kmodes import (
    check_eq9_estimate,
    check_eq9_variance,
    check_index_unmix,
    check_oue_perturb,
    check_unmixed_variance,
)

__all__ = [
    "ALPHA",
    "ExerciseError",
    # generic
    "check_function",
    "check_sampler",
    "check_number",
    "check_prediction",
    "reference_inputs",
    # 01 Peng et al.
    "check_grr_perturb",
    "check_ldpfo_estimate",
    "check_hamming_rr_perturb",
    "check_hamming_rr_ldp_level",
    "check_hamming_rr_expected_distance",
    "check_ldpfo_variance",
    # 02 Zhang et al.
    "check_oue_perturb",
    "check_eq9_estimate",
    "check_index_unmix",
    "check_eq9_variance",
    "check_unmixed_variance",
    # 03 Zhang & Cheng
    "check_quadtree_level",
    "check_eug_grid_size",
    "check_dpqt_epsilon_spent",
    "check_split_probability",
    "check_reach_probability",
    # 04 Li et al.
    "check_noisy_sums_counts",
    "check_release_scale",
    "check_total_spent",
    "check_idp_initial_centres",
    "check_gaussian_sigma",
    # 05 Wang et al.
    "check_clustering_feature",
    "check_dpbirch_noisy_update",
    "check_cf_sensitivities",
    "check_dpbirch_insertion_epsilon",
    "check_public_tree_leaf_noise",
    "check_replacement_sensitivities",
    # 06 Chang et al.; Google's LSH clustering
    "check_lsh_noise_scales",
    "check_zcdp_epsilon",
    # the modules
    "dp_birch",
    "dpqt_kmeans",
    "idp_kmeans",
    "ldpk_modes",
    "lsh_coreset",
    "sampling_kmodes",
]
