"""The end-to-end run behind ``dynid demo`` (and ``make demo``), with no hardware.

On an embedded robot: choose "true" parameters near the priors, design an exciting Fourier
trajectory, simulate the robot tracking it in closed loop (drive loops, sensor noise and
quantization), identify the base parameters by least squares and the standard parameters by
physically consistent least squares with the default processing, check that the reported
uncertainty matches the actual errors, and check both estimates on a second, independent
trajectory.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import DynidWarning
from .hardware import SensorNoise, Simulation, simulate, smooth_coulomb
from .identify import OLS, IdentificationData, PhysicallyConsistent, validate
from .models import BaseParameters, Regressor, Robot, base_parameters, load_robot
from .trajectories import DesignSettings, basis_motion, design_excitation

__all__ = ["Experiment", "experiment", "run_demo", "true_parameters"]


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


@dataclass(frozen=True)
class Experiment:
    """A simulated identification experiment: the model, its base parameters, the true
    parameters, the designs, and the simulated training and validation runs."""

    model: Robot
    base: BaseParameters
    theta: np.ndarray
    design: object
    train: Simulation
    test: Simulation
    control_rate: float


def experiment(robot: str = "panda", *, seed: int = 0, periods: int = 2, noise: float = 0.02,
               rate: float = 100.0, quick: bool = False, runs: int = 1,
               echo: Callable[[str], None] = print) -> Experiment:
    """Design and simulate the demo's experiment (``runs`` noisy training runs of the same
    excitation; see :func:`run_demo` for the settings)."""
    rng = np.random.default_rng(seed)
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
                     record_every=5, noise=sensors, seed=seed + 10, runs=runs)
    test = simulate(model, theta, validation_design.trajectory, period, control_rate=control,
                    record_every=5, noise=sensors, seed=seed + 20)
    gains = train.gains
    echo(f"recording    {train.measured[0].time.size} samples at {rate:g} Hz over {periods} "
         f"periods, output noise {noise:.0%} of RMS; drives at {control:g} Hz with velocity "
         f"loops of {gains.modes[0] / (2 * np.pi):.2g}–{gains.modes[1] / (2 * np.pi):.2g} Hz, "
         f"simulated in {time.perf_counter() - t0:.1f} s")
    return Experiment(model, base, theta, design, train, test, control)


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
    t_start = time.perf_counter()
    exp = experiment(robot, seed=seed, periods=periods, noise=noise, rate=rate, quick=quick,
                     echo=echo)
    model, base, theta = exp.model, exp.base, exp.theta

    t0 = time.perf_counter()
    with warnings.catch_warnings():  # the residual's whiteness is printed below
        warnings.filterwarnings("ignore", message="identification: the residual",
                                category=DynidWarning)
        data = IdentificationData(model, exp.train.measured[0], base=base)
        ols = OLS().fit(data)
        consistent = PhysicallyConsistent(regularization="euclidean", weight=1.0).fit(data)
    proc = data.processing
    echo(f"processing   positions low-passed at {proc.cutoff:g} Hz, regressor and output "
         f"filtered alike and decimated by {proc.decimate} (chosen by the residual's "
         "whiteness)" if proc.cutoff is not None else "processing   positions used unfiltered")
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
    z_rms = float(np.sqrt(np.mean(z ** 2)))
    echo(f"... {base.rank - 12} more; RMS of err/σ over all {base.rank}: {z_rms:.2f} "
         "(1 means the reported uncertainty is honest)")
    white = ols.result_.whiteness
    echo(f"residual     lag-1 autocorrelation {np.abs(white.autocorrelation[0]).max():.2f} at "
         f"most; σ factors from the residual's colour "
         f"{white.sigma_factor.min():.2f}–{white.sigma_factor.max():.2f} "
         + ("(white: the σ hold)" if white.white else
            "(coloured on " + ", ".join(np.array(white.names)[white.coloured]) + ")"))

    lmi = consistent.result_.solver["lmi_min_eigenvalue"]
    err = np.linalg.norm(consistent.params_ - theta) / np.linalg.norm(theta)
    echo(f"\nconsistent   smallest pseudo-inertia eigenvalue {lmi:.2e} (every link physical); "
         f"standard parameters within {err:.1%} of the truth, total mass "
         f"{_mass(model, consistent.params_):.2f} kg (true {_mass(model, theta):.2f} kg); "
         f"its uncertainty: {_COVARIANCES[consistent.result_.covariance_method]}")
    figures = {"rank": base.rank, "z_rms": z_rms, "lmi_min": lmi, "standard_error": err,
               "cutoff": proc.cutoff, "decimate": proc.decimate,
               "sigma_factor_max": float(white.sigma_factor.max())}
    echo("validation   relative error on an independent trajectory (the true parameters "
         "give the noise floor):")
    for label, params in (("prior", model.prior), ("least squares", ols.result_),
                          ("consistent", consistent.result_), ("true", theta)):
        check = validate(model, params, exp.test.measured[0], processing=proc)
        echo(f"  {label:<14} {check.overall_relative_error:6.2f} %   per joint: "
             + " ".join(f"{e:.1f}" for e in check.relative_error))
        figures[f"validation_{label.replace(' ', '_')}"] = check.overall_relative_error
    echo(f"\ndone in {time.perf_counter() - t_start:.1f} s")
    return figures


_COVARIANCES = {
    "unconstrained": "weighted least squares' (no active constraint restricts the base "
                     "parameters)",
    "bootstrap": "bootstrap under the constraints (some are active)",
    "conditional": "conditional on the active constraints",
}


def _mass(robot: Robot, theta: np.ndarray) -> float:
    return float(theta[robot.parameters.where(kind="m")].sum())
