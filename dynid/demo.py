"""The end-to-end demonstration run by ``dynid demo`` (and ``make demo``).

On an embedded robot, with no hardware: choose "true" parameters near the priors, simulate a
recording of an exciting multi-sine trajectory with measurement noise, build the regressor and
the base parameters, estimate them by least squares from the QR-compressed system, and report
the parameter errors against the truth and the prediction error on a second trajectory.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from .identify.system import LinearSystem
from .models import Regressor, Robot, base_parameters, load_robot

__all__ = ["multisine", "run_demo", "true_parameters"]


def multisine(robot: Robot, duration: float, rate: float, rng: np.random.Generator,
              harmonics: int = 5, base_frequency: float = 0.1
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random periodic multi-sine per coordinate, scaled into the position and velocity
    limits (80 % of the range), with analytic velocity and acceleration."""
    t = np.arange(0.0, duration, 1.0 / rate)
    lim = robot.limits
    lo = np.where(np.isfinite(lim.lower), lim.lower, -np.pi)
    hi = np.where(np.isfinite(lim.upper), lim.upper, np.pi)
    w = 2 * np.pi * base_frequency * np.arange(1, harmonics + 1)
    amp = rng.standard_normal((2, harmonics, robot.n)) / np.arange(1, harmonics + 1)[:, None]
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    q = s @ amp[0] + c @ amp[1]
    v = (c * w) @ amp[0] - (s * w) @ amp[1]
    a = -(s * w**2) @ amp[0] - (c * w**2) @ amp[1]
    half = 0.4 * (hi - lo)
    scale = half / np.abs(q).max(axis=0)
    vmax = np.where(np.isfinite(lim.velocity), lim.velocity, np.inf)
    scale = np.minimum(scale, 0.8 * vmax / np.abs(v).max(axis=0))
    mid = (lo + hi) / 2
    return mid + q * scale, v * scale, a * scale


def true_parameters(robot: Robot, rng: np.random.Generator, spread: float = 0.1) -> np.ndarray:
    """Priors perturbed by ±``spread``: each link's ten parameters scaled together (which keeps
    a physical link physical), every other parameter scaled on its own."""
    params = robot.parameters
    theta = params.priors.copy()
    for link in params.links:
        theta[params.link_block(link)] *= 1 + spread * rng.uniform(-1, 1)
    others = np.array([p.group != "link" for p in params])
    theta[others] *= 1 + spread * rng.uniform(-1, 1, others.sum())
    return theta


def run_demo(robot: str = "panda", *, seed: int = 0, duration: float = 60.0,
             rate: float = 200.0, noise: float = 0.02,
             echo: Callable[[str], None] = print) -> dict:
    """Simulate, identify and report; returns the figures it printed."""
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    model = load_robot(robot)
    reg = Regressor(model)
    base = base_parameters(reg, seed=seed)
    t_model = time.perf_counter() - t0
    echo(f"robot        {model!r}")
    echo(f"base         {base.rank} base parameters of {len(model.parameters)} "
         f"(model and base parameters in {t_model * 1e3:.0f} ms)")

    theta = true_parameters(model, rng)
    q, v, a = multisine(model, duration, rate, rng)
    clean = reg.predict(q, v, a, theta)
    sigma = noise * clean.std(axis=0)
    y = clean + sigma * rng.standard_normal(clean.shape)
    echo(f"recording    {q.shape[0]} samples at {rate:g} Hz, output noise {noise:.0%} of each "
         f"joint's RMS ({model.output})")

    t0 = time.perf_counter()
    system = LinearSystem(base.rank)
    scale = 1.0 / sigma  # weight each joint by its noise level
    for sl, Y in reg.chunks(q, v, a):
        system.add((base.regressor(Y) * scale[None, :, None]).reshape(-1, base.rank),
                   (y[sl] * scale).reshape(-1))
    estimate = system.solve()
    std = np.sqrt(np.diag(system.covariance(estimate)))
    t_fit = time.perf_counter() - t0
    truth = base.to_base(theta)
    echo(f"estimate     weighted least squares in {t_fit:.2f} s\n")

    echo(f"{'base parameter':<60} {'true':>11} {'estimate':>11} {'error':>8} {'σ':>8}")
    rel = np.abs(estimate - truth) / np.maximum(np.abs(truth), 1e-12)
    within = np.abs(estimate - truth) <= 3 * std
    for name, t_, e_, s_ in zip(base.names, truth, estimate, std, strict=True):
        short = name if len(name) <= 60 else name[:57] + "..."
        echo(f"{short:<60} {t_:11.5g} {e_:11.5g} {e_ - t_:8.1e} {s_:8.1e}")

    qv, vv, av = multisine(model, duration / 2, rate, np.random.default_rng(seed + 1))
    truth_v = reg.predict(qv, vv, av, theta)
    y_v = truth_v + sigma * np.random.default_rng(seed + 2).standard_normal(truth_v.shape)
    pred = np.concatenate([base.regressor(Y) @ estimate for _, Y in reg.chunks(qv, vv, av)])
    rmse = np.sqrt(np.mean((pred - y_v) ** 2, axis=0))
    echo("")
    echo(f"parameters   median relative error {np.median(rel):.2e}, "
         f"{within.mean():.0%} within 3σ of the truth")
    echo("validation   RMSE per joint / noise σ: "
         + " ".join(f"{r / s:.2f}" for r, s in zip(rmse, sigma, strict=True))
         + "  (1.00 is the noise floor)")
    return {"rank": base.rank, "relative_error": rel, "within_3sigma": within.mean(),
            "rmse_over_noise": rmse / sigma}
