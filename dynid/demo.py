"""The end-to-end run behind ``dynid demo`` (and ``make demo``), with no hardware.

On an embedded robot: choose "true" parameters near the priors, design an exciting Fourier
trajectory, simulate the robot tracking it in closed loop (drive loops, sensor noise and
quantization), identify the base parameters by least squares and the standard parameters by
physically consistent least squares, and check both on a second, independent trajectory.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from .identify import (
    OLS,
    IdentificationData,
    PhysicallyConsistent,
    Processing,
    SensorNoise,
    simulate,
    smooth_coulomb,
    validate,
)
from .models import Regressor, Robot, base_parameters, load_robot
from .trajectories import DesignSettings, basis_motion, design_excitation

__all__ = ["run_demo", "true_parameters"]


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


def run_demo(robot: str = "panda", *, seed: int = 0, periods: int = 2, noise: float = 0.02,
             rate: float = 100.0, quick: bool = False,
             echo: Callable[[str], None] = print) -> dict:
    """Design, simulate, identify and validate; returns the figures it printed.

    Parameters
    ----------
    robot
        Embedded robot name or robot file.
    seed
        Seed of the true parameters, the designs and the noise.
    periods
        Periods of the excitation recorded.
    noise
        Output noise as a fraction of each output's RMS on the excitation.
    rate
        Recording rate, Hz (the drives' loops run at five times this rate).
    quick
        Cheaper design settings (fewer samples and iterations, one start).
    """
    rng = np.random.default_rng(seed)
    t_start = time.perf_counter()
    model = smooth_coulomb(load_robot(robot), joint=0.02, motor=2.0)
    base = base_parameters(model, seed=seed)
    theta = true_parameters(model, rng)
    echo(f"robot        {model!r}")
    echo(f"base         {base.rank} identifiable combinations of {len(model.parameters)} "
         "parameters")

    settings = DesignSettings(seed=seed, starts=1 if quick else 2,
                              max_iterations=20 if quick else 60, samples=40 if quick else 100)
    t0 = time.perf_counter()
    design = design_excitation(model, settings)
    period = 1.0 / design.trajectory.frequency
    echo(f"excitation   {design.trajectory.harmonics} harmonics at {1 / period:g} Hz; "
         f"condition number {design.condition['range']:.1f} (column-normalized), "
         f"worst limit margin {design.report.margin:.3f}, in {time.perf_counter() - t0:.1f} s")
    validation_design = design_excitation(model, DesignSettings(
        seed=seed + 1, starts=1, max_iterations=settings.max_iterations,
        samples=settings.samples))

    t0 = time.perf_counter()
    control = 5 * rate
    t = np.arange(0.0, period, 1.0 / rate)
    clean = Regressor(model).predict(*basis_motion(design.trajectory, model)(t), theta)
    sensors = SensorNoise(position_std=1e-5,
                          output_std=noise * np.sqrt(np.mean(clean**2, axis=0)))
    train = simulate(model, theta, design.trajectory, periods * period, control_rate=control,
                     record_every=5, noise=sensors, seed=seed + 10)
    test = simulate(model, theta, validation_design.trajectory, period, control_rate=control,
                    record_every=5, noise=sensors, seed=seed + 20)
    recording = train.measured[0]
    echo(f"recording    {recording.time.size} samples at {rate:g} Hz over {periods} periods, "
         f"closed loop at {control:g} Hz, output noise {noise:.0%} of RMS, simulated in "
         f"{time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    processing = Processing(cutoff=rate / 5)
    data = IdentificationData(model, recording, processing=processing, base=base)
    ols = OLS().fit(data)
    consistent = PhysicallyConsistent(regularization="euclidean", weight=1.0).fit(data)
    echo(f"identified   least squares and physically consistent least squares in "
         f"{time.perf_counter() - t0:.1f} s\n")

    truth = base.to_base(theta)
    estimate, std = ols.result_.base_params, np.sqrt(np.diag(ols.result_.base_cov))
    z = (estimate - truth) / std
    echo(f"{'base parameter (largest first)':<58} {'true':>10} {'estimate':>10} {'σ':>8} "
         f"{'err/σ':>6}")
    for i in np.argsort(-np.abs(truth))[:12]:
        name = base.names[i] if len(base.names[i]) <= 58 else base.names[i][:55] + "..."
        echo(f"{name:<58} {truth[i]:10.4g} {estimate[i]:10.4g} {std[i]:8.1e} {z[i]:6.2f}")
    echo(f"... {base.rank - 12} more; RMS of err/σ over all {base.rank}: "
         f"{np.sqrt(np.mean(z ** 2)):.2f} (1 means the reported uncertainty is honest)")

    lmi = consistent.result_.solver["lmi_min_eigenvalue"]
    err = np.linalg.norm(consistent.params_ - theta) / np.linalg.norm(theta)
    echo(f"\nconsistent   smallest pseudo-inertia eigenvalue {lmi:.2e} (every link physical); "
         f"standard parameters within {err:.1%} of the truth, total mass "
         f"{_mass(model, consistent.params_):.2f} kg (true {_mass(model, theta):.2f} kg)")
    figures = {"rank": base.rank, "z_rms": float(np.sqrt(np.mean(z ** 2))), "lmi_min": lmi,
               "standard_error": err}
    echo("validation   relative error on an independent trajectory (the true parameters "
         "give the noise floor):")
    for label, params in (("prior", model.prior), ("least squares", ols.result_),
                          ("consistent", consistent.result_), ("true", theta)):
        check = validate(model, params, test.measured[0], processing=processing)
        echo(f"  {label:<14} {check.overall_relative_error:6.2f} %   per joint: "
             + " ".join(f"{e:.1f}" for e in check.relative_error))
        figures[f"validation_{label.replace(' ', '_')}"] = check.overall_relative_error
    echo(f"\ndone in {time.perf_counter() - t_start:.1f} s")
    return figures


def _mass(robot: Robot, theta: np.ndarray) -> float:
    return float(theta[robot.parameters.where(kind="m")].sum())
