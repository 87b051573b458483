"""Shared fixtures and independent reference computations for the tests."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from mechanism_checks import model_with

import dynid
from dynid.hardware import FourierReference

DATA = Path(__file__).parent / "data"
#: Design options of the command line that keep a design to a fraction of a second.
QUICK = ["--harmonics", "2", "--starts", "1", "--max-iterations", "3", "--samples", "16",
         "--quiet"]
DATASETS = Path(os.environ.get("DYNID_DATASETS",
                               Path(__file__).resolve().parents[2] / "shared" / "datasets"))


def arm_files(folder: Path, *, seed: int = 1, noise=1e-3, name: str = "run", csv: bool = False
              ) -> tuple[Path, dynid.Robot, Path]:
    """The two-joint arm's robot file (``tests/data/arm2.yaml``) written into ``folder``, and a
    recording of it along a random Fourier motion (``seed``) with output noise of standard
    deviation ``noise`` (one, or one per joint), saved as ``name.npz`` (and ``name.csv`` with
    the columns t, shoulder, elbow, tau_shoulder, tau_elbow when ``csv``). Returns the robot
    file, the robot and the NPZ path."""
    robot_file = folder / "arm2.yaml"
    robot_file.write_text((DATA / "arm2.yaml").read_text())
    robot = dynid.load_robot(robot_file)
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, seed=seed)
    t = np.arange(0.0, 4.0, 0.01)
    q, v, a = ref(t)
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    y += np.asarray(noise) * np.random.default_rng(seed - 1).standard_normal(y.shape)
    npz = dynid.identify.save_npz(dynid.Recording(t, q, y, velocities=v, accelerations=a,
                                                  names=robot.joint_names),
                                  folder / f"{name}.npz")
    if csv:
        np.savetxt(folder / f"{name}.csv", np.column_stack([t, q, y]), delimiter=",",
                   comments="", header="t,shoulder,elbow,tau_shoulder,tau_elbow")
    return robot_file, robot, npz


def closed_loop_files(folder: Path, robot, *, seed: int = 1) -> tuple[Path, Path]:
    """The excitation of :func:`arm_files` (``seed``) as a trajectory file and the settings of
    drives tuned along it at 100 Hz (its recording's rate) as a closed-loop settings file."""
    from dynid.hardware import save_loop_settings, simulate
    from dynid.trajectories import save_trajectory

    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, seed=seed)
    gains = simulate(robot, robot.prior, ref, 4.0, control_rate=100).gains
    return (save_trajectory(folder / "excitation.json", ref, robot=robot.name),
            save_loop_settings(folder / "loop.yaml", robot, gains, control_rate=100))


def dataset(name: str) -> Path:
    """Path of a shared real-robot dataset, or skip the test when it is absent."""
    path = DATASETS / name
    if not path.is_dir():
        why = ("the shared datasets folder is absent" if not DATASETS.is_dir() else
               "the shared datasets folder does not hold it")
        pytest.skip(f"dataset {name} not found at {path} ({why}; set DYNID_DATASETS)")
    return path


@pytest.fixture(scope="session")
def panda() -> dynid.Robot:
    return dynid.load_robot("panda")


def random_theta(robot: dynid.Robot, rng: np.random.Generator) -> np.ndarray:
    """Arbitrary parameter values (linearity holds for any, physical or not)."""
    return robot.prior + rng.standard_normal(len(robot.parameters))


def reference_output(robot: dynid.Robot, theta: np.ndarray, q, v, a) -> np.ndarray:
    """Model output computed directly, independently of the regressor's assembly.

    Links: Pinocchio's RNEA with the inertias set from ``theta``. Friction: ``fv v + fc sgn v +
    fo`` per joint, plus the armature ``Ia q̈``. Gear motors: motor-side
    ``Jm q̈_m + fvm q̇_m + fcm sgn q̇_m`` with
    ``q_m = r q``; joint torque adds ``r`` times it, motor torque is ``τ / r`` plus it,
    current divides motor torque by ``k_T``. Only robots whose closure is the identity and
    whose drives are gears with no coupling.
    """
    params = robot.parameters
    model = model_with(robot, theta)
    data = model.createData()
    tau = np.array([pin.rnea(model, data, robot.tree.configuration(qk[None])[0], vk, ak)
                    for qk, vk, ak in zip(q, v, a, strict=True)])
    value = dict(zip(params.names, theta, strict=True))

    def get(owner, kind):
        return value.get(f"{owner}.{kind}", 0.0)

    def sgn(x, term_owner):
        term = next((t for t in robot.terms if getattr(t, "owner", None) == term_owner), None)
        s = getattr(term, "smoothing", 0.0)
        return np.tanh(x / s) if s > 0 else np.sign(x)

    for j, joint in enumerate(robot.joint_names):
        tau[:, j] += (get(joint, "fv") * v[:, j] + get(joint, "fc") * sgn(v[:, j], joint)
                      + get(joint, "fo") + get(robot.actuator_names[j], "Ia") * a[:, j])
    ratios = np.array([d.ratio for d in robot.transmission.drives])
    motor = np.zeros_like(tau)
    for j, m in enumerate(robot.actuator_names):
        vm, am = ratios[j] * v[:, j], ratios[j] * a[:, j]
        motor[:, j] = get(m, "Jm") * am + get(m, "fvm") * vm + get(m, "fcm") * sgn(vm, m)
    if robot.output == "joint_torque":
        return tau + ratios * motor
    motor_torque = tau / ratios + motor
    if robot.output == "motor_torque":
        return motor_torque
    return motor_torque / robot.transmission.torque_constants


def logged_arm(*, seed: int, seconds: float, rate: float, order: int, cutoff: float):
    """The test arm (``data/arm2.yaml``) on a 0.5–1.5 Hz Fourier motion: the robot, its
    recording with exact states and the RNEA torques through a zero-phase Butterworth of
    ``order`` at ``cutoff`` Hz (as a logger that low-passes them writes them), and the
    torques themselves."""
    import scipy.signal

    from dynid.identify import Recording

    robot = dynid.load_robot(DATA / "arm2.yaml")
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, seed=seed)
    t = np.arange(0, seconds, 1 / rate)
    q, v, a = ref(t)
    tau = reference_output(robot, robot.prior, q, v, a)
    sos = scipy.signal.butter(order, cutoff, fs=rate, output="sos")
    rec = Recording(t, q, scipy.signal.sosfiltfilt(sos, tau, axis=0), velocities=v,
                    accelerations=a, names=robot.joint_names)
    return robot, rec, tau


def standardized_errors(robot, base, recordings, truth, processing=None) -> np.ndarray:
    """``(θ̂_b − θ_b) / σ̂`` of weighted least squares, one row per recording, processed as
    ``processing`` says (default: the automatic processing): for an honest reported
    uncertainty, standard normal."""
    from dynid.identify import WLS, IdentificationData

    z = []
    for rec in recordings:
        data = IdentificationData(robot, rec, base=base, processing=processing)
        est = WLS().fit(data)
        z.append((est.base_params_ - truth) / np.sqrt(np.diag(est.base_cov_)))
    return np.array(z)


def check_physical(robot: dynid.Robot, theta: np.ndarray, eps: float = 1e-6) -> None:
    """Assert what a physically consistent estimate promises of standard parameters ``theta``:
    every link's pseudo-inertia has eigenvalues ≥ ``eps``, every other parameter is within its
    bounds, and every centre of mass is in its automatic box."""
    from dynid.identify import com_boxes, pseudo_inertia

    params = robot.parameters
    for link in params.links:
        lowest = np.linalg.eigvalsh(pseudo_inertia(theta[params.link_block(link)]))[0]
        assert lowest >= eps - 1e-9, link
    for p, value in zip(params, theta, strict=True):
        if p.group != "link":
            assert p.lower <= value <= p.upper, p.name
    for link, (lo, hi) in com_boxes(robot).items():
        block = theta[params.link_block(link)]
        com = block[1:4] / block[0]
        assert np.all(com >= lo - 1e-9) and np.all(com <= hi + 1e-9), link


def current_run(robot: dynid.Robot, theta: np.ndarray, motion, rng=None, noise: float = 0.02
                ) -> dynid.Recording:
    """The model's current along ``motion`` (t, q, v, a), with its states recorded and white
    noise of σ ``noise`` A (none without a generator)."""
    t, q, v, a = motion
    y = dynid.Regressor(robot).predict(q, v, a, theta)
    if rng is not None:
        y = y + noise * rng.standard_normal(y.shape)
    return dynid.Recording(t, q, y, velocities=v, accelerations=a, names=robot.joint_names,
                           output_kind="current")


def run_cli(argv, capsys) -> tuple[int, str, str]:
    """Run ``dynid`` with ``argv`` in this process: its exit status, standard output and
    standard error."""
    from dynid.cli import main

    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err
