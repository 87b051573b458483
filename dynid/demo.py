"""The main job behind ``dynid demo`` (and ``make demo``), on the simulated robot.

On an embedded robot (default: the Ariane arm, current as output, ball-screw and lever
actuators): choose "true" parameters near the priors, design an exciting Fourier trajectory
and a second one for validation, capture both from the simulated drives over python-can's
virtual CAN bus (CiA 402, SYNC, PDOs, as on real drives), identify with and without the
actuator models, check the reported uncertainty against the truth, validate on the second
trajectory, and write the recordings, the result, the parameter file, the URDF, the MJCF and
the report into one folder.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .errors import DataError, DynidWarning
from .models import Robot, base_parameters, load_robot

__all__ = ["DemoOutcome", "run_demo", "true_parameters"]


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


@dataclass
class DemoOutcome:
    """The demo's figures and files: validation error per model (overall % and per output),
    the RMS of the base parameters' (estimate − truth)/σ, and the files written."""

    validation: dict[str, float] = field(default_factory=dict)
    per_output: dict[str, np.ndarray] = field(default_factory=dict)
    z_rms: float = float("nan")
    files: dict[str, Path] = field(default_factory=dict)


def output_folder(folder: str | Path) -> Path:
    """The demo's output folder, created; refused before anything runs when it cannot be
    written."""
    import os

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"--output-dir {folder}: cannot create it ({exc.strerror or exc}); "
                        "give a folder you can write") from None
    if not os.access(folder, os.W_OK):
        raise DataError(f"--output-dir {folder}: no permission to write there; give a folder "
                        "you can write")
    return folder


def run_demo(robot: str = "ariane", *, output_dir: str | Path = "demo-output", seed: int = 0,
             periods: int = 4, rate: float = 250.0, noise: float = 0.01, quick: bool = False,
             progress: bool = True, echo: Callable[[str], None] = print) -> DemoOutcome:
    """Design, capture on the simulated drives, identify, validate and export.

    Parameters
    ----------
    robot
        Embedded robot name or robot file.
    output_dir
        Folder for the recordings, the result, the parameter file, the URDF, the MJCF and
        the report (created when missing).
    seed
        Seed of the true parameters, the designs and the simulated noise.
    periods
        Excitation periods recorded for identification (validation: half as many, ≥ 1).
    rate
        Cycle rate of the drives' SYNC and of the recording, Hz.
    noise
        Measured output noise, a fraction of each drive's rated current or torque.
    quick
        Cheaper design settings (fewer samples and iterations, one start).
    progress
        Progress bars on standard error.
    """
    from .hardware import smooth_coulomb

    t_start = time.perf_counter()
    folder = output_folder(output_dir)
    out = DemoOutcome()
    model = smooth_coulomb(load_robot(robot), joint=0.02, motor=100.0)
    theta = true_parameters(model, np.random.default_rng(seed))
    base = base_parameters(model, seed=seed)
    echo(f"robot        {model!r}; {base.rank} identifiable combinations")

    train, check = _designs(model, seed, quick, progress, echo)
    from .trajectories import save_trajectory

    out.files["excitation"] = save_trajectory(folder / "excitation.json", train)
    runs = _capture(model, theta, folder, [("identification", train.trajectory, periods),
                                           ("validation", check.trajectory,
                                            max(1, periods // 2))],
                    rate, noise, seed, progress, echo)
    out.files.update({f"recording ({k})": v[0] for k, v in runs.items()})
    recording, validation = runs["identification"][1], runs["validation"][1]

    fits = _identify(model, base, recording, progress, echo)
    truth = base.to_base(theta)
    wls = fits["with actuator models"][1]
    z = (wls.base_params - truth) / np.sqrt(np.diag(wls.base_cov))
    out.z_rms = float(np.sqrt(np.mean(z ** 2)))
    echo(f"uncertainty  RMS of (estimate − truth)/σ over the {base.rank} base parameters: "
         f"{out.z_rms:.2f} (1: the σ are honest; above 1: errors beyond the output noise, "
         "e.g. from velocities differenced from coarse encoders)")
    _validate(model, theta, fits, validation, out, echo)

    consistent = fits["consistent"][1]
    out.files.update(_export(model, consistent, [recording], [validation], folder, progress,
                             echo))
    echo("files")
    for label, path in out.files.items():
        echo(f"  {label:<26} {path}")
    echo(f"done in {time.perf_counter() - t_start:.0f} s")
    return out


def _designs(model: Robot, seed: int, quick: bool, progress: bool, echo):
    from .trajectories import DesignSettings, design_excitation

    options = dict(frequency=0.2, starts=1 if quick else 2, max_iterations=20 if quick else 60,
                   samples=40 if quick else 100)
    t0 = time.perf_counter()
    train = design_excitation(model, DesignSettings(seed=seed, **options), progress=progress)
    check = design_excitation(model, DesignSettings(seed=seed + 1, **options),
                              progress=progress)
    echo(f"excitation   {train.trajectory.harmonics} harmonics at "
         f"{train.trajectory.frequency:g} Hz, condition number {train.condition['range']:.0f} "
         f"(column-normalized), worst limit margin {train.report.margin:.3f}; a second one "
         f"for validation; designed in {time.perf_counter() - t0:.1f} s")
    return train, check


def _capture(model, theta, folder, runs, rate, noise, seed, progress, echo) -> dict:
    """Each run captured from the simulated drives over the virtual bus, one robot session:
    the validation starts where the identification run left the arm."""
    import os

    from .hardware import BusSettings, DriveSettings, VirtualRobot, capture
    from .identify import read_csv

    settings = VirtualRobot.lockstep(DriveSettings.defaults(model, rate=rate))
    bus = BusSettings(channel=f"dynid-demo-{os.getpid()}")
    captured = {}
    with VirtualRobot.for_capture(model, settings, bus, noise=noise, seed=seed, theta=theta):
        for label, trajectory, periods in runs:
            path = folder / f"{label}.csv"
            result = capture(model, trajectory, path, settings=settings, bus=bus,
                             periods=periods, overwrite=True, progress=progress)
            echo(f"capture      {label}: {result.summary()}")
            captured[label] = (path, read_csv(path))
    return captured


def _identify(model, base, recording, progress, echo) -> dict:
    """Label → (model, result) of each fit."""
    from ._progress import Steps
    from .identify import WLS, IdentificationData, PhysicallyConsistent

    bare = model.with_terms([t for t in model.terms if t.space != "actuator"])
    t0 = time.perf_counter()
    steps = Steps(4, "identify", enabled=progress)
    with warnings.catch_warnings():  # the residual's colour is in the report
        warnings.simplefilter("ignore", DynidWarning)
        steps.next("processing")
        data = IdentificationData(model, recording, base=base)
        fits = {}
        for label, m, estimator, d in (
                ("with actuator models", model, WLS(), data),
                ("consistent", model, PhysicallyConsistent(), data),
                ("without actuator models", bare, WLS(), None)):
            steps.next(label)
            d = d if d is not None else IdentificationData(m, recording)
            fits[label] = (m, estimator.fit(d).result_)
    steps.close()
    proc = data.processing
    echo(f"identified   weighted least squares with and without the actuator models (rotor "
         f"inertia, screw mass, motor friction) and physically consistent least squares, in "
         f"{time.perf_counter() - t0:.1f} s; positions low-passed at {proc.cutoff:.3g} Hz, "
         f"regressor and output decimated by {proc.decimate}")
    return fits


def _validate(model, theta, fits, validation, out: DemoOutcome, echo) -> None:
    from .identify import validate

    names = " ".join(f"{n:>8}" for n in model.output_names)
    echo(f"validation   relative error on the second trajectory, % (the true parameters give "
         f"the noise floor)\n  {'model':<26} {'overall':>8} {names}")
    rows = [("prior", model, model.prior), *[(k, m, r) for k, (m, r) in fits.items()],
            ("true", model, theta)]
    processing = replace(fits["with actuator models"][1].processing, skip=0)  # alike for all
    for label, m, params in rows:
        check = validate(m, params, validation, processing=processing)
        out.validation[label] = check.overall_relative_error
        out.per_output[label] = check.relative_error
        echo(f"  {label:<26} {check.overall_relative_error:8.2f} "
             + " ".join(f"{e:8.2f}" for e in check.relative_error))


def _export(model, result, recordings, validation, folder: Path, progress: bool,
            echo) -> dict:
    from .export import save_parameters, write_mjcf, write_urdf
    from .report import write_report

    files = {"result": result.save(folder / "result.json"),
             "parameters": save_parameters(result, folder / "parameters.yaml", robot=model)}
    urdf = write_urdf(model, result, folder / f"{model.name}.urdf")
    mjcf = write_mjcf(model, result, folder / f"{model.name}.xml")
    files.update({"URDF": urdf.path, "MJCF (MuJoCo)": mjcf.path})
    if urdf.not_written:
        echo("exported     the physically consistent estimate; URDF and MJCF cannot hold:")
        for line in urdf.not_written:
            echo(f"  {line if len(line) <= 96 else line[:93] + '...'}")
    with warnings.catch_warnings():  # the report shows the residual's colour
        warnings.simplefilter("ignore", DynidWarning)
        files["report"] = write_report(
            model, result, {"identification": recordings[0]}, folder / "report.html",
            validation={"validation": validation[0]}, title=f"dynid demo: {model.name}",
            progress=progress)
    return files
