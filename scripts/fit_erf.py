#!/usr/bin/env python3
"""Fits the rational erf and erfc of the generated kernels (compiler/backends/cpp/codegen/codegen_prelude.cpp).

    erf(a)  ~= a * Ps(a^2) / Qs(a^2)         0 <= a < 1.75   relative error: erf of tiny values stays exact
    erfc(a) ~= exp(-a^2) * Pc(a) / Qc(a)     0 <= a <= 6     relative error (erfc(6) = 2.2e-17; 0 beyond)

erf for a >= 1.75 is 1 - erfc(a). The normal CDF of GELU is 0.5 * erfc(|x| / sqrt 2) for negative x
(and 1 minus that for positive x): relative-accurate in the tail, where 0.5 * (1 + erf(x / sqrt 2))
cancels (float erf near -1 is only good to 3e-8: GELU(-4.65) lost 3% of itself, fuzz_graphs seed
4242), and one exp, one division and eight multiply-adds, so GELU's kernel stays faster than eager.
Q(0) = 1 for both, and Pc(0) = 1 (erfc(0) is exactly 1). Linearised least squares (P - f Q = 0, weighted by 1 / (f * Q_prev)) with
Lawson's reweighting towards the minimax fit; then the float32-rounded coefficients are evaluated
with float32 Horner steps (the kernels fuse each step: a little better), and the C++ and its worst
errors printed.

    /usr/bin/python3 scripts/fit_erf.py
"""
import math

import numpy as np

SPLIT, END = 1.75, 6.0
ERF_DEG = (3, 3)
ERFC_DEG = (3, 4)


def lawson(t, f, deg_p, deg_q, p0=None, iters=300):
    """Minimax-leaning rational fit of f(t) ~= P(t) / Q(t), Q(0) = 1 (and P(0) = p0 if given), in
    relative error."""
    first = 0 if p0 is None else 1
    rhs = f if p0 is None else f - p0
    w = np.ones_like(t) / len(t)
    q_prev = np.ones_like(t)
    best = (np.inf, None, None)
    for _ in range(iters):
        a = np.hstack([np.vstack([t**k for k in range(first, deg_p + 1)]).T,
                       np.vstack([-f * t**k for k in range(1, deg_q + 1)]).T])
        weight = np.sqrt(w) / (f * q_prev)
        c, *_ = np.linalg.lstsq(a * weight[:, None], rhs * weight, rcond=None)
        n = deg_p + 1 - first
        p = np.concatenate([[] if p0 is None else [p0], c[:n]])
        q = np.concatenate([[1.0], c[n:]])
        q_prev = np.polyval(q[::-1], t)
        err = (np.polyval(p[::-1], t) / q_prev - f) / f
        if np.max(np.abs(err)) < best[0]:
            best = (np.max(np.abs(err)), p.copy(), q.copy())
        w = w * np.abs(err)
        w /= w.sum()
    return best[1], best[2]


def unit_points(n=20000):
    return np.unique(np.cos(np.linspace(0, np.pi, n)) * 0.5 + 0.5)  # dense near both ends


def fit_erf():
    a = unit_points() * SPLIT
    a = a[a > 1e-6]
    p, q = lawson((a / SPLIT) ** 2, np.array([math.erf(v) for v in a]) / a, *ERF_DEG)  # scaled for conditioning
    return [c / SPLIT ** (2 * k) for k, c in enumerate(p)], [c / SPLIT ** (2 * k) for k, c in enumerate(q)]


def fit_erfc():
    a = unit_points() * END
    # P(0) = 1: erfc(0) = 1 exactly, so the normal CDF of 0 is exactly 0.5
    p, q = lawson(a / END, np.array([math.erfc(v) * math.exp(v * v) for v in a]), *ERFC_DEG, p0=1.0)
    return [c / END**k for k, c in enumerate(p)], [c / END**k for k, c in enumerate(q)]


def horner32(coefficients, t):
    r = np.zeros_like(t)
    for c in reversed(coefficients):
        r = (r * t + np.float32(c)).astype(np.float32)
    return r


def float32_errors(erf, erfc):
    a = np.linspace(0, END, 600001).astype(np.float32)
    small = a[(a > 0) & (a < SPLIT)]
    got = (small * horner32(erf[0], small * small) / horner32(erf[1], small * small)).astype(np.float32)
    want = np.array([math.erf(float(v)) for v in small])
    erf_rel = np.max(np.abs(got - want) / want)
    scale = np.exp(-(a * a)).astype(np.float32)  # as the kernels' exp, ~1 ulp
    got = (scale * horner32(erfc[0], a) / horner32(erfc[1], a)).astype(np.float32)
    want = np.array([math.erfc(float(v)) for v in a])
    return erf_rel, np.max(np.abs(got - want) / want)


def horner_lines(name, coefficients, var):
    c = [f"{np.float32(v):.9e}f" for v in coefficients]
    return [f"  float {name} = {c[-1]};"] + [f"  {name} = tc_fma({name}, {var}, {v});" for v in reversed(c[:-1])]


if __name__ == "__main__":
    erf, erfc = fit_erf(), fit_erfc()
    print("\n".join(["// in tc_erfc_nonneg:"] + horner_lines("p", erfc[0], "a") + horner_lines("q", erfc[1], "a")))
    print("\n".join(["// in tc_erf, with s = a * a:"] + horner_lines("p", erf[0], "s") + horner_lines("q", erf[1], "s")))
    erf_rel, erfc_rel = float32_errors(erf, erfc)
    print(f"// float32: erf on (0, {SPLIT}) worst relative error {erf_rel:.2e}; "
          f"erfc on [0, {END}] worst relative error {erfc_rel:.2e}")
