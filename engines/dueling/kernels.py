"""Numba kernels: pair selection, feedback, delay queue, and parameter updates, for all seeds.

One call runs a block of rounds for ONE algorithm and EVERY seed. Inside, per seed and round:

1. select a pair (a, b) from the selection features Zsel (x, or (x, phi_hat(x)) with a predictor);
2. RCDP-UCB only: weight omega_t = min(1, alpha / ||dz_t||_{V^-1}) on the OBSERVED complete
   feature difference and rank-one update V <- V + kappa omega_t dz dz^T (paper Alg. 1 step 3);
3. draw the BTL outcome, let the adversary flip it (budget C) or delay it (regime);
4. queue the sample (a ring buffer of arrival buckets, processed in serving order);
5. process every sample arriving this round: online (weighted) Newton step for the baselines,
   appending to the weighted-MLE history for RCDP-UCB, then (RCDP-UCB) re-solve the weighted MLE.

Algorithm kinds: 0 RCDP-UCB, 1 RCDB, 2 MaxInP, 3 MaxPairUCB, 4 CoLSTIM. Rank-one updates use the
Sherman-Morrison formula; the weighted MLE is Newton's method, as in the reference.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from engines.dueling.algorithms import (
    DELAY_GAUSS,
    DELAY_GEOM,
    DELAY_STRATEGIC,
    MAXINP,
    MAXPAIR,
    P_BETA_T,
    P_CORR_C,
    P_DELAY_BUDGET,
    P_DELAY_MAG,
    P_DELAY_MEAN,
    P_DELAY_STD,
    P_DELAY_TYPE,
    P_DELTA,
    P_EXPLORE,
    P_GROWTH,
    P_KAPPA,
    P_LAMBDA,
    P_MLE_FAST,
    P_WALPHA,
    RCDB,
    RCDP,
)


@njit(cache=True)
def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


@njit(cache=True)
def _dot(a, b):
    """a . b, summed in order (no BLAS call: a process then never loads scipy's BLAS for it)."""
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True)
def _qform(A, v):
    """v^T A v."""
    p = v.shape[0]
    s = 0.0
    for i in range(p):
        acc = 0.0
        for j in range(p):
            acc += A[i, j] * v[j]
        s += v[i] * acc
    return s


@njit(cache=True)
def _sm_update(Ainv, v, w, tmp):
    """Sherman-Morrison: (A + w v v^T)^-1 from A^-1, in place; returns v^T A^-1 v (before)."""
    p = v.shape[0]
    for i in range(p):
        acc = 0.0
        for j in range(p):
            acc += Ainv[i, j] * v[j]
        tmp[i] = acc
    q = 0.0
    for i in range(p):
        q += v[i] * tmp[i]
    den = 1.0 + w * q
    for i in range(p):
        for j in range(p):
            Ainv[i, j] -= w * tmp[i] * tmp[j] / den
    return q


@njit(cache=True)
def _argmax(x):
    best = 0
    for i in range(1, x.shape[0]):
        if x[i] > x[best]:
            best = i
    return best


@njit(cache=True)
def _select(kind, Z, theta, Ainv, c, gum, util, sc, diff, AZ, G):
    """Pair selection of each algorithm on features Z (K, p); returns (a, b). ``util``, ``sc``
    (K), ``diff`` (p), ``AZ`` (p, K) and ``G`` (K, K) are scratch space (no allocation per round)."""
    K, p = Z.shape
    for k in range(K):
        acc = 0.0
        for j in range(p):
            acc += Z[k, j] * theta[j]
        util[k] = acc
    if kind == RCDP:
        # a_t = argmax <theta, z_hat>; b_t = argmax <theta, z - z_a> + c ||z - z_a||_{V^-1}.
        # As in the reference's main.py path, b_t may equal a_t (its score is exactly 0).
        a = _argmax(util)
        # the reference computes mean_diff as (Z - z_a) @ theta; use the same arithmetic
        for k in range(K):
            md = 0.0
            for j in range(p):
                md += (Z[k, j] - Z[a, j]) * theta[j]
            for j in range(p):
                diff[j] = Z[k, j] - Z[a, j]
            sc[k] = md + c * math.sqrt(max(_qform(Ainv, diff), 0.0))
        return a, _argmax(sc)
    if kind == RCDB or kind == MAXPAIR:
        # joint pair UCB: argmax_{i,j} u_i + u_j + c ||z_i - z_j||_{W^-1}  (i == j allowed), with
        # G = Z W^-1 Z^T formed symmetric, so (i, j) and (j, i) score exactly alike and the first
        # (i < j) wins; in the reference round-off decides which of the two is "a".
        for j in range(p):
            for k in range(K):
                acc = 0.0
                for m in range(p):
                    acc += Ainv[j, m] * Z[k, m]
                AZ[j, k] = acc
        for i in range(K):
            for k in range(i + 1):
                acc = 0.0
                for j in range(p):
                    acc += Z[i, j] * AZ[j, k]
                G[i, k] = acc
                G[k, i] = acc
        best = -np.inf
        bi, bj = 0, 0
        for i in range(K):
            for j in range(K):
                d2 = G[i, i] + G[j, j] - 2.0 * G[i, j]
                s = util[i] + util[j] + c * math.sqrt(max(d2, 0.0))
                if s > best:
                    best = s
                    bi, bj = i, j
        return bi, bj
    if kind == MAXINP:
        i = _argmax(util)
        best = -np.inf
        bj = -1
        ucb_best = -np.inf
        uj = 0
        for k in range(K):
            ucb = util[k] + c * math.sqrt(max(_qform(Ainv, Z[k]), 0.0))
            if k == i:
                continue
            if ucb > ucb_best:
                ucb_best = ucb
                uj = k
            if ucb >= util[i]:
                for j in range(p):
                    diff[j] = Z[k, j] - Z[i, j]
                unc = math.sqrt(max(_qform(Ainv, diff), 0.0))
                if unc > best:
                    best = unc
                    bj = k
        if bj < 0:
            return i, uj
        return i, bj
    # CoLSTIM: perturbed leader i = argmax u + clip(eps, -5, 5) ||z||_{W^-1}, then the
    # optimistic challenger j != i.
    for k in range(K):
        eps = min(max(gum[k], -5.0), 5.0)
        sc[k] = util[k] + eps * math.sqrt(max(_qform(Ainv, Z[k]), 0.0))
    i = _argmax(sc)
    for k in range(K):
        if k == i:
            sc[k] = -np.inf
            continue
        md = 0.0
        for j in range(p):
            diff[j] = Z[k, j] - Z[i, j]
            md += diff[j] * theta[j]
        sc[k] = md + c * math.sqrt(max(_qform(Ainv, diff), 0.0))
    return i, _argmax(sc)


@njit(cache=True)
def _cholesky_solve(H, g, L, x):
    """x = H^-1 g for a symmetric positive definite H (lam I + a PSD sum), by Cholesky."""
    p = g.shape[0]
    for i in range(p):
        for j in range(i + 1):
            acc = H[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            L[i, j] = math.sqrt(acc) if i == j else acc / L[j, j]
    for i in range(p):
        acc = g[i]
        for k in range(i):
            acc -= L[i, k] * x[k]
        x[i] = acc / L[i, i]
    for i in range(p - 1, -1, -1):
        acc = x[i]
        for k in range(i + 1, p):
            acc -= L[k, i] * x[k]
        x[i] = acc / L[i, i]


# reassoc lets LLVM vectorise the sums over the history (a reordering of additions, as BLAS does)
@njit(cache=True, fastmath={"reassoc", "contract"})
def newton_mle(theta, ZT, o, w, n, lam, max_iter, tol, marg, res, curv):
    """Weighted regularised MLE (paper eq. for Theta_t), warm-started Newton, in place.

    Minimises (lam/2)||theta||^2 - sum_s w_s log g((-1)^(1-o_s) <theta, z_s>) over the first n
    samples, the columns of ``ZT`` (p, >= n), stopping when ||grad|| < tol or after max_iter
    steps (reference: 50, 1e-7). As in the reference, the Hessian is formed only when a step is
    taken. ``marg``, ``res`` and ``curv`` (>= n) are scratch space. Returns the steps taken.
    """
    p = theta.shape[0]
    H = np.empty((p, p))
    L = np.empty((p, p))
    g = np.empty(p)
    step = np.empty(p)
    for it in range(max_iter):
        for s in range(n):
            marg[s] = 0.0
        for i in range(p):
            ti = theta[i]
            for s in range(n):
                marg[s] += ZT[i, s] * ti
        for s in range(n):
            pr = 1.0 / (1.0 + math.exp(-marg[s]))
            res[s] = w[s] * (pr - o[s])
            curv[s] = w[s] * pr * (1.0 - pr)
        gn = 0.0
        for i in range(p):
            acc = 0.0
            for s in range(n):
                acc += res[s] * ZT[i, s]
            g[i] = lam * theta[i] + acc
            gn += g[i] * g[i]
        if math.sqrt(gn) < tol:
            return it
        for i in range(p):  # H = lam I + sum_s curv_s z_s z_s^T
            for s in range(n):
                marg[s] = curv[s] * ZT[i, s]
            for j in range(i + 1):
                acc = 0.0
                for s in range(n):
                    acc += marg[s] * ZT[j, s]
                H[i, j] = acc
                H[j, i] = acc
            H[i, i] += lam
        _cholesky_solve(H, g, L, step)
        for i in range(p):
            theta[i] -= step[i]
    return max_iter


@njit(cache=True)
def run_block(kind, prm, t0, T, Zsel, Zobs, U, unif, dnoise, gum,
              theta, Ainv, corr_count, delay_total, cum, regret, arms,
              q_dz, q_o, q_w, head, tail, nxt,
              h_dz, h_o, h_w, n_hist, n_refit, omega_sum):
    """Run rounds t0 .. t0 + n - 1 of one algorithm for all S seeds (see module docstring).

    Shapes: Zsel/Zobs (S, n, K, p), U (S, n, K), unif/dnoise (S, n), gum (S, n, K or 1),
    theta (S, p), Ainv (S, p, p), ring buffers q_* (S, R, ...), head/tail (S, R), nxt (S, R),
    RCDP history h_dz (S, p, T) (samples as columns) and h_o/h_w (S, T), regret (S, T)
    cumulative, arms (S, n, 2).
    """
    S, n, K, p = Zsel.shape
    R = head.shape[1]
    lam = prm[P_LAMBDA]
    kappa = prm[P_KAPPA]
    tmp = np.empty(p)
    dz = np.empty(p)
    # scratch space of the pair selection and of the MLE
    util, sc, diff = np.empty(K), np.empty(K), np.empty(p)
    AZ, G = np.empty((p, K)), np.empty((K, K))
    hT = h_dz.shape[2]
    marg, res, curv = np.empty(hT), np.empty(hT), np.empty(hT)
    for s in range(S):
        for r in range(n):
            t = t0 + r
            c = prm[P_EXPLORE]
            if kind == RCDP and prm[P_BETA_T] > 0:
                # beta_t option (not in the reference): sqrt(lam) +
                # (sqrt(2 p log(1 + t / (p lam)) + 2 log(1/delta)) + sqrt(p)) / kappa
                c = math.sqrt(lam) + (math.sqrt(2.0 * p * math.log(1.0 + (t + 1) / (p * lam))
                                                + 2.0 * math.log(1.0 / prm[P_DELTA]))
                                      + math.sqrt(p)) / kappa
            a, b = _select(kind, Zsel[s, r], theta[s], Ainv[s], c, gum[s, r], util, sc, diff, AZ, G)
            arms[s, r, 0] = a
            arms[s, r, 1] = b
            # --- the sample's feature difference and weight
            w = 1.0
            if kind == RCDP:
                for j in range(p):
                    dz[j] = Zobs[s, r, a, j] - Zobs[s, r, b, j]
                nv = math.sqrt(max(_qform(Ainv[s], dz), 0.0))
                w = 1.0 if nv < 1e-9 else min(1.0, prm[P_WALPHA] / nv)
                _sm_update(Ainv[s], dz, kappa * w, tmp)
                omega_sum[s] += w
            else:
                for j in range(p):
                    dz[j] = Zsel[s, r, a, j] - Zsel[s, r, b, j]
            # --- environment: BTL outcome, corruption, delay
            ua = U[s, r, a]
            ub = U[s, r, b]
            o = 1 if unif[s, r] < 1.0 / (1.0 + math.exp(-(ua - ub))) else 0
            corrupted = False
            favours_better = (ua > ub and o == 1) or (ub > ua and o == 0)
            if corr_count[s] < prm[P_CORR_C] and favours_better:
                corr_count[s] += 1
                o = 1 - o
                corrupted = True
            delay = 0
            if not corrupted:
                dt = prm[P_DELAY_TYPE]
                if dt == DELAY_GAUSS:
                    v = prm[P_DELAY_MEAN] + prm[P_DELAY_STD] * dnoise[s, r]
                    delay = int(max(0.0, np.rint(v)))
                elif dt == DELAY_GEOM and prm[P_DELAY_MEAN] > 0:
                    # failures before the first success of Bernoulli(1 / (mean + 1)), by inversion
                    q = 1.0 / (prm[P_DELAY_MEAN] + 1.0)
                    u = max(dnoise[s, r], 1e-300)
                    delay = int(math.floor(math.log(u) / math.log(1.0 - q)))  # noqa: RUF046
                if dt != DELAY_STRATEGIC:
                    delay_total[s] += delay       # rounds of delay applied (a diagnostic here)
                elif delay_total[s] < prm[P_DELAY_BUDGET] and max(ua, ub) > 0.0:
                    # strategic: delay pairs that look good by floor(sqrt(Lambda)) rounds
                    act = min(prm[P_DELAY_MAG], prm[P_DELAY_BUDGET] - delay_total[s])
                    if act > 0:
                        delay_total[s] += act
                        delay = int(act)
                delay = min(delay, R - 1)
            # --- queue (ring of arrival buckets; serving order kept inside a bucket)
            arr = t + delay
            if arr < T:
                slot = t % R
                for j in range(p):
                    q_dz[s, slot, j] = dz[j]
                q_o[s, slot] = o
                q_w[s, slot] = w
                nxt[s, slot] = -1
                bk = arr % R
                if head[s, bk] < 0:
                    head[s, bk] = slot
                else:
                    nxt[s, tail[s, bk]] = slot
                tail[s, bk] = slot
            # --- arrivals of round t
            bk = t % R
            it = head[s, bk]
            head[s, bk] = -1
            arrived = 0
            while it >= 0:
                arrived += 1
                if kind == RCDP:
                    m = n_hist[s]
                    for j in range(p):
                        h_dz[s, j, m] = q_dz[s, it, j]
                    h_o[s, m] = q_o[s, it]
                    h_w[s, m] = q_w[s, it]
                    n_hist[s] = m + 1
                else:
                    v = q_dz[s, it]
                    mu = _sigmoid(_dot(theta[s], v))
                    wt = 1.0
                    if kind == RCDB:
                        nv = math.sqrt(max(_qform(Ainv[s], v), 0.0))
                        wt = 1.0 if nv < 1e-9 else min(1.0, prm[P_WALPHA] / nv)
                    _sm_update(Ainv[s], v, wt, tmp)
                    # theta += W^-1 dz w (o - mu), with the updated W^-1 (online Newton step)
                    coef = wt * (q_o[s, it] - mu)
                    for i in range(p):
                        acc = 0.0
                        for j in range(p):
                            acc += Ainv[s, i, j] * v[j]
                        theta[s, i] += acc * coef
                it = nxt[s, it]
            if kind == RCDP and arrived > 0:
                m = n_hist[s]
                if prm[P_MLE_FAST] == 0 or m < 100 or m >= n_refit[s] * (1.0 + prm[P_GROWTH]):
                    newton_mle(theta[s], h_dz[s], h_o[s], h_w[s], m, lam, 50, 1e-7, marg, res, curv)
                    n_refit[s] = m
            # --- regret r_t = ((u* - u_a) + (u* - u_b)) / 2
            ustar = U[s, r, 0]
            for k in range(1, K):
                ustar = max(ustar, U[s, r, k])
            cum[s] += 0.5 * ((ustar - ua) + (ustar - ub))
            regret[s, t] = cum[s]
