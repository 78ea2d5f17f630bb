"""Fits the rational erf approximation used by Sources/SAMKernels/GELU.swift (Kernels.erf8).

erf(x) ~= x * P(x^2) / Q(x^2) on |x| <= C, Q(0) = 1, with x clamped to +-C beyond (erf(C) rounds
to 1.0 in float32). The fit is a linearised least-squares problem (x P - y Q = 0), reweighted a
few times by 1/Q (Loeb) and then towards minimax (Lawson). Prints the coefficients rounded to
float32 and the error of a float32 Horner evaluation against math.erf.

    python3 scripts/fit_erf.py      # needs numpy only
"""
import math

import numpy as np

C = 3.925
P_TERMS, Q_TERMS = 7, 6


def fit():
    xs = np.unique(np.concatenate([np.linspace(0, C, 20000), C * np.cos(np.linspace(0, np.pi / 2, 20000))]))
    ys = np.array([math.erf(v) for v in xs])
    t = xs * xs
    w = np.ones_like(xs)
    for iteration in range(30):
        a = np.zeros((len(xs), P_TERMS + Q_TERMS - 1))
        for i in range(P_TERMS):
            a[:, i] = xs * t**i
        for j in range(1, Q_TERMS):
            a[:, P_TERMS + j - 1] = -ys * t**j
        solution, *_ = np.linalg.lstsq(a * w[:, None], ys * w, rcond=None)
        p = solution[:P_TERMS]
        q = np.concatenate([[1.0], solution[P_TERMS:]])
        q_values = np.polyval(q[::-1], t)
        error = xs * np.polyval(p[::-1], t) / q_values - ys
        w = w * np.abs(error) ** 0.3 if iteration > 5 else 1 / np.abs(q_values)
        w = np.maximum(w / w.max(), 1e-12)
    return p.astype(np.float32), q.astype(np.float32)


def evaluate_float32(x, p, q):
    x = np.clip(x.astype(np.float32), -C, C).astype(np.float32)
    t = x * x
    p_value = np.float32(p[-1])
    for c in p[-2::-1]:
        p_value = p_value * t + c
    q_value = np.float32(q[-1])
    for c in q[-2::-1]:
        q_value = q_value * t + c
    return x * p_value / q_value


def main():
    p, q = fit()
    print("erf(C) as float32:", np.float32(math.erf(C)))
    print("P (t^0 first):", [f"{float(v):.8g}" for v in p])
    print("Q (t^0 first):", [f"{float(v):.8g}" for v in q])
    rng = np.random.default_rng(0)
    test = np.concatenate([rng.uniform(-6, 6, 2_000_000), np.linspace(-5, 5, 2_000_001)]).astype(np.float32)
    reference = np.array([math.erf(float(v)) for v in test])
    error = np.abs(evaluate_float32(test, p, q).astype(np.float64) - reference)
    print(f"float32 max abs error {error.max():.3g} at x = {test[error.argmax()]:.6g}")


if __name__ == "__main__":
    main()
