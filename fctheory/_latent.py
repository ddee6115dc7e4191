"""The latent-space sum behind H and H* (Theorems 1 and 3), in log space.

Both H(t) and H*(t) contain

    G(s) = log(1 − p + p(1 + (n_c − 1)e^{−s})^L),   p = K/n_c^L,  s = ηt (or η*t),

which by the binomial identity (Lemma B) equals log(1 + Σ_r |S_r| e^{−γr}) of the appendix.
Its derivative is G'(s) = −L·E1(s)·E2(s) with E1 = expit(log(n_c−1) − s) and
E2 = expit(logit p + L log1p((n_c−1)e^{−s})).  To stay accurate near s = 0 (the trivial-solution
threshold of τ) we never form E1E2 directly but its ratio to the value at 0:

    log(E1E2)(s) − log(E1E2)(0) = −ℓ(1/n_c, s) − ℓ(q, t(s)),

with ℓ(A, t) = log(1 + A(e^t − 1)), q = (1−p)/(1−p+K) and t(s) = −L log(1 − (1−1/n_c)(1−e^{−s})) ≥ 0.
Every term is a small positive quantity computed with relative accuracy, for any s ≥ 0.
"""

from __future__ import annotations

import numpy as np

from ._logmath import expit, log1p_aexpm1, log1p_aexpm1_prime

__all__ = ["LatentSum"]


def one_minus_p(n_c, L, K, dtype=np.float64):
    """1 − K/n_c^L in ``dtype``: exact where n_c^L is an exact number of that dtype, else −expm1(log p)."""
    dt = np.dtype(dtype).type
    n_c, L, K = (np.asarray(a, dtype=dt) for a in (n_c, L, K))
    bits = np.finfo(dt).nmant + 1
    exact = L * np.log2(np.asarray(n_c, dtype=np.float64)) <= bits
    with np.errstate(over="ignore"):
        N = np.power(n_c, np.where(exact, L, 0))
        om_exact = (N - K) / N
    om = np.where(exact, om_exact, -np.expm1(np.minimum(np.log(K) - L * np.log(n_c), 0)))
    return np.maximum(om, 0)


class LatentSum:
    """Precomputed constants of G for broadcast arrays (n_c, L, K) in a given float dtype."""

    def __init__(self, n_c, L, K, dtype=np.float64):
        dt = np.dtype(dtype).type
        n_c, L, K = np.broadcast_arrays(*(np.asarray(a, dtype=dt) for a in (n_c, L, K)))
        self.dtype = dt
        self.n_c, self.L, self.K = n_c, L, K
        self.log_nc = np.log(n_c)
        self.c1 = np.log(n_c - 1)  # log(n_c − 1)
        self.logK = np.log(K)
        self.logp = np.minimum(self.logK - L * self.log_nc, 0)
        self.om = one_minus_p(n_c, L, K, dt)
        with np.errstate(divide="ignore"):
            self.log_om = np.log(self.om)
        self.log_Kom = self.logK + np.log1p(self.om / K)  # log(K + 1 − p)
        self.logq = self.log_om - self.log_Kom  # q = (1−p)/(K+1−p)
        self.log1mq = self.logK - self.log_Kom
        self.log1m_inv_nc = self.c1 - self.log_nc  # log(1 − 1/n_c)

    def take(self, idx):
        """A view of the constants at index ``idx`` (used inside vectorised solvers)."""
        out = object.__new__(LatentSum)
        for k, v in self.__dict__.items():
            out.__dict__[k] = v[idx] if isinstance(v, np.ndarray) else v
        return out

    # ---- t(s) and the two ℓ-terms
    def t_of_s(self, s):
        return -self.L * np.log1p(np.expm1(-s) * (1 - 1 / self.n_c))

    def delta_log_rhs(self, s):
        """D(s) = ℓ(1/n_c, s) + ℓ(q, t(s)) = −[log(E1E2)(s) − log(E1E2)(0)] ≥ 0."""
        t = self.t_of_s(s)
        return log1p_aexpm1(-self.log_nc, self.log1m_inv_nc, s) + log1p_aexpm1(self.logq, self.log1mq, t)

    def delta_log_rhs_prime(self, s):
        """D′(s) = expit(s − log(n_c−1)) + ℓ′(q, t)·L·expit(log(n_c−1) − s) > 0."""
        t = self.t_of_s(s)
        return expit(s - self.c1) + log1p_aexpm1_prime(self.logq, self.log1mq, t) * self.L * expit(self.c1 - s)

    def log_rhs0(self):
        """log(E1E2)(0) = log(1 − 1/n_c) + log(K/(K + 1 − p))."""
        return self.log1m_inv_nc + self.logK - self.log_Kom

    # ---- G itself and its derivatives (for H, H*)
    def G(self, s):
        """G(s) = log(1 − p + p(1 + (n_c−1)e^{−s})^L) (the log term of H and H*)."""
        a = self.L * np.log1p((self.n_c - 1) * np.exp(-s))
        return log1p_aexpm1(self.logp, self.log_om, a)

    def E1E2(self, s):
        e1 = expit(self.c1 - s)
        a = self.L * np.log1p((self.n_c - 1) * np.exp(-s))
        with np.errstate(invalid="ignore", divide="ignore"):
            e2 = expit(self.logp - self.log_om + a)
        return e1, e2

    def G_prime(self, s):
        """G′(s) = −L·E1·E2."""
        e1, e2 = self.E1E2(s)
        return -self.L * e1 * e2

    def G_second(self, s):
        """G″(s) = L[E1(1−E1)E2 + L E1² E2(1−E2)] > 0 (strict convexity)."""
        e1, e2 = self.E1E2(s)
        return self.L * (e1 * (1 - e1) * e2 + self.L * e1**2 * e2 * (1 - e2))
