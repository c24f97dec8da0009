"""k-modes without privacy, and DP-modes-Lloyd (central DP k-modes).

:class:`KModes` -- weighted Hamming k-modes (Huang 1998), with random,
frequent-value (Peng et al. 2021, Alg. 4 lines 1-15) or given initial centres.

:class:`DPKModes` -- DP-modes-Lloyd (Nguyen, Computers & Security 78:60-75,
2018), the central-DP baseline of Peng et al. (2021) and, as "DPK", of Zhang
et al. (2022): per-cluster per-attribute value counts with Laplace noise, and
the noisy argmax as the new mode.

Records are integer codes, ``X[:, j]`` in ``0 .. k_j - 1``.
"""

from __future__ import annotations

import numpy as np

from .._distances import nearest
from ..accounting import PrivacyLedger
from ..mechanisms import laplace_mechanism, laplace_scale
from ..validation import (
    check_choice,
    check_epsilon,
    check_int,
    check_n_clusters,
    check_random_state,
    check_sample_weight,
)
from ._base import CENTRAL
from ._common import (
    CategoricalClusterer,
    PrivateCategoricalClusterer,
    categorical_input,
    distinct_weighted_rows,
    domain_centres,
    domain_from_data,
    frequent_value_draw,
    lloyd,
    modes_from_counts,
    unique_rows,
    value_counts,
)

__all__ = ["KModes", "DPKModes", "frequent_value_centres"]


def frequent_value_centres(X, n_clusters, random_state=None, sample_weight=None, domain_sizes=None, max_draws=100_000):
    """Initial centres of Peng et al. (2021), Alg. 4 lines 1-15, with the errata fixed.

    For every attribute take its f most frequent values (weighted), with
    f = ceil(K^(1/m)) (the text's floor makes D1 and D4 loop forever); then draw
    candidates whose j-th value is one of attribute j's f values, uniformly,
    and keep each new one until there are K (the text's ``|C0| <= K`` would
    produce K + 1). Ties go to the smaller code.

    Without ``domain_sizes`` only values that occur in ``X`` are ranked; with
    it, every value of the declared domain is (one that does not occur has
    frequency 0), which the text leaves open.

    Parameters
    ----------
    X : array-like (n, m), integer codes
    n_clusters : int >= 1, K
    random_state : None, int or Generator
    sample_weight : None or (n,) non-negative weights
    domain_sizes : None or m ints, the public schema
    max_draws : int, the most candidate draws

    Returns
    -------
    centres : int64 (K, m)

    Raises ValueError when fewer than K distinct candidates exist.
    """
    X, sizes = domain_from_data(X) if domain_sizes is None else categorical_input(X, domain_sizes)
    k = check_n_clusters(n_clusters)
    w = check_sample_weight(sample_weight, X.shape[0])
    return frequent_value_draw(
        X,
        k,
        check_random_state(random_state),
        w,
        None if domain_sizes is None else sizes,
        check_int(max_draws, "max_draws", minimum=1),
    )


class KModes(CategoricalClusterer):
    """Weighted k-modes with Hamming distance (not private).

    Parameters
    ----------
    n_clusters : int >= 1
    init : "random", "frequent" or array (n_clusters, m)
        "random": distinct records drawn with probability proportional to weight;
        "frequent": :func:`frequent_value_centres` (Peng et al. Alg. 4).
    max_iter : int >= 1, the most update steps (T in Peng et al.)
    n_init : int >= 1, runs from different initial centres; the lowest cost wins
    domain_sizes : sequence of m ints, or None (or "data") to take them from the data
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (n_clusters, m) int64
    labels_ : nearest centre of each record of the fitted data (ties: lowest index)
    cost_ : weighted sum of Hamming distances to the nearest centre
    n_iter_ : update steps of the best run (stops early when the centres repeat)
    domain_sizes_ : tuple, the domain used
    n_features_in_, feature_names_in_ : as in scikit-learn
    """

    def __init__(self, n_clusters=8, *, init="random", max_iter=100, n_init=1, domain_sizes=None, random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.n_init = n_init
        self.domain_sizes = domain_sizes
        self.random_state = random_state

    def _initial_centres(self, X, w, sizes, rng):
        if isinstance(self.init, str):
            check_choice(self.init, "init", {"random", "frequent"})
            if self.init == "random":
                return distinct_weighted_rows(X, w, self.n_clusters, rng)
            return frequent_value_draw(X, self.n_clusters, rng, w)
        centres = np.asarray(self.init)
        if centres.shape != (self.n_clusters, len(sizes)):
            raise ValueError(f"init array must have shape ({self.n_clusters}, {len(sizes)}), got {centres.shape}")
        return categorical_input(centres, sizes, name="init")[0]

    def fit(self, X, y=None, sample_weight=None):
        """Fit k-modes to integer-coded records.

        Parameters
        ----------
        X : array-like of shape (n_samples, m), integer codes
        y : ignored
        sample_weight : None or (n_samples,) non-negative weights

        Returns
        -------
        self
        """
        X, sizes, _ = self._fit_input(X)
        check_n_clusters(self.n_clusters, X.shape[0])
        max_iter = check_int(self.max_iter, "max_iter", minimum=1)
        n_init = check_int(self.n_init, "n_init", minimum=1)
        w = check_sample_weight(sample_weight, X.shape[0])
        rng = check_random_state(self.random_state)
        best = None
        for _ in range(n_init):
            centres, n_iter = lloyd(X, w, self._initial_centres(X, w, sizes, rng), max_iter, sizes)
            labels, dist = nearest(X, centres, "hamming")
            cost = float(np.dot(w, dist))
            if best is None or cost < best[0]:
                best = (cost, centres, labels, n_iter)
        self.cost_, self.cluster_centers_, self.labels_, self.n_iter_ = best
        self.domain_sizes_ = sizes
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """``fit(X, sample_weight=...)``, then the nearest centre of each record.

        Returns
        -------
        labels_ : ndarray of shape (n_samples,)
        """
        return self.fit(X, sample_weight=sample_weight).labels_


class DPKModes(PrivateCategoricalClusterer):
    """DP-modes-Lloyd: k-modes whose every update is epsilon-DP (Nguyen 2018).

    Each of at most T = ``max_iter`` iterations assigns records to the nearest
    centre and releases, per cluster g, attribute j and value v, the count
    n_gj(v) + Lap(m T / epsilon) (through :func:`~dpclust_lib.mechanisms.laplace_mechanism`);
    the new mode is the noisy argmax. Adding or removing one record changes one
    count in each of the m attributes, so the L1 sensitivity of an iteration's
    counts is m, and with epsilon / T per iteration (sequential composition) the
    scale is m T / epsilon. Stopping early (centres unchanged) is decided on
    released values only; the budget of the iterations not run is not spent.

    Neighbouring data sets differ by one added or removed record
    (``neighbouring_``); replacing a record costs up to 2 epsilon.

    Parameters
    ----------
    n_clusters : int >= 1
    epsilon : float > 0, the total budget
    max_iter : int >= 1, T
    init : "domain" (default) or "records"
        "domain": K distinct points drawn uniformly from the declared domain,
        independent of the data (costs no budget). "records": K distinct records
        of the data, as Peng et al. describe the baseline; not covered by epsilon
        (warns with :class:`PrivacyLeakWarning`; ``epsilon_guaranteed_`` = inf).
    domain_sizes : m ints, the public schema (required); "data" reads it off the
        records (not private: warns, ``epsilon_guaranteed_`` = inf)
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_, initial_centers_, n_iter_, ledger_ (a :class:`PrivacyLedger`),
    noise_scale_ (m T / epsilon), domain_sizes_, n_features_in_, feature_names_in_;
    epsilon_spent_ : the budget spent (n_iter_ * epsilon / T)
    epsilon_guaranteed_ : epsilon_spent_, or inf for a leaking setting
    neighbouring_ : "add/remove one record"

    Labels of the fitted records are not kept (they are not private): use
    ``predict(X)`` or :meth:`exact_diagnostics`.
    """

    def __init__(self, n_clusters=8, *, epsilon=1.0, max_iter=5, init="domain", domain_sizes=None, random_state=None):
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.init = init
        self.domain_sizes = domain_sizes
        self.random_state = random_state

    def fit(self, X, y=None):
        """Run DP-modes-Lloyd on integer-coded records.

        Parameters
        ----------
        X : array-like of shape (n_samples, m), integer codes inside ``domain_sizes``
        y : ignored

        Returns
        -------
        self
        """
        eps = check_epsilon(self.epsilon)
        check_choice(self.init, "init", {"domain", "records"})
        X, sizes, leaky = self._fit_input(X)
        k = check_n_clusters(self.n_clusters, X.shape[0])
        T = check_int(self.max_iter, "max_iter", minimum=1)
        rng = check_random_state(self.random_state)
        m = len(sizes)
        eps_iter = eps / T
        ledger = PrivacyLedger(eps)
        # The value counts only depend on how many records are equal: work on the
        # distinct records with their multiplicities (same counts, far fewer distances).
        rows, _, multiplicity = unique_rows(X)
        if self.init == "records":
            self._leaky(
                "init='records' picks the initial centres among the private records; "
                "init='domain' draws them from the public domain instead."
            )
            leaky = True
            centres = distinct_weighted_rows(rows, multiplicity, k, rng)
        else:
            centres = domain_centres(sizes, k, rng)
        self.initial_centers_ = centres
        n_iter = 0
        for n_iter in range(1, T + 1):
            labels, _ = nearest(rows, centres, "hamming")
            counts = value_counts(rows, labels, multiplicity, k, sizes)
            ledger.spend(
                eps_iter,
                f"iteration {n_iter}: value counts per cluster and attribute, "
                f"L1 sensitivity {m}, Laplace scale {laplace_scale(m, eps_iter):.4g}",
            )
            # One release per iteration: all m attributes' counts, L1 sensitivity m together.
            noisy = laplace_mechanism(np.concatenate([c.ravel() for c in counts]), m, eps_iter, rng)
            noisy = np.split(noisy, np.cumsum([c.size for c in counts])[:-1])
            new = modes_from_counts([v.reshape(c.shape) for v, c in zip(noisy, counts)])
            if np.array_equal(new, centres):
                break
            centres = new
        self.cluster_centers_ = centres
        self.n_iter_ = n_iter
        self.ledger_ = ledger
        self.epsilon_spent_ = ledger.spent
        self.epsilon_guaranteed_ = float("inf") if leaky else ledger.spent
        self.neighbouring_ = CENTRAL
        self.noise_scale_ = laplace_scale(m, eps_iter)
        self.domain_sizes_ = sizes
        return self
