"""Closed-loop estimators (IDIM-IV, DIDIM) on the two-joint arm driven by its simulated drives.

The arm's motor encoders have 4096 increments per turn; the drives feed them back and record
them with white noise of 10 increments. The truth is known, so the tests check what each
estimator promises against it: exactness on noise-free data, the bias least squares has and
the closed-loop estimators remove, their uncertainty over seeds, and the formulas against a
direct dense computation.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import DATA

import dynid
from dynid.demo import true_parameters
from dynid.errors import DataError, DynidWarning, SolverError
from dynid.hardware import ClosedLoop, DriveLoops, FourierReference, SensorNoise, simulate
from dynid.identify import (
    DIDIM,
    OLS,
    CompressedData,
    Estimator,
    IdentificationData,
    InstrumentalVariables,
    Processing,
    load_result,
)
from dynid.identify._coloured import SEGMENT

RATE, DURATION, INCREMENTS = 250.0, 4.0, 4096
PROCESSING = Processing(cutoff=15.0, decimate=5)


@pytest.fixture(scope="module")
def arm():
    robot = dynid.load_robot(DATA / "arm2.yaml")
    theta = true_parameters(robot, np.random.default_rng(0))
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, seed=2)
    return robot, theta, ref, dynid.base_parameters(robot)


def experiment(arm, runs: int, *, counts: float = 10.0, increments: float = INCREMENTS,
               seed: int = 3):
    robot, theta, ref, _ = arm
    loops = DriveLoops(encoder_increments=increments)
    step = 2 * np.pi / increments
    sim = simulate(robot, theta, ref, DURATION, control_rate=RATE, space="actuator",
                   loops=loops, noise=SensorNoise(position_step=step, position_std=counts * step),
                   runs=runs, seed=seed)
    return sim, ClosedLoop(robot, ref, DURATION, gains=sim.gains, control_rate=RATE, loops=loops)


@pytest.fixture(scope="module")
def noisy(arm):
    return experiment(arm, 4)


def test_the_closed_loop_repeats_the_experiment(arm):
    """With the experiment's gains, quantized encoders and the true parameters, the simulator
    reproduces the run's true states; other parameters give another run."""
    robot, theta, ref, _ = arm
    sim, _ = experiment(arm, 1, counts=0.0)
    loops = DriveLoops(encoder_increments=INCREMENTS)
    loop = ClosedLoop(robot, ref, DURATION, gains=sim.gains, control_rate=RATE, loops=loops,
                      quantized=True)
    (run,) = loop(theta)
    np.testing.assert_allclose(run.positions, sim.truth[0].positions, rtol=0, atol=1e-12)
    np.testing.assert_allclose(run.output, sim.truth[0].output, rtol=0, atol=1e-9)
    (other,) = loop(theta * 1.2)
    assert np.abs(other.output - run.output).max() > 1e-3


class Given(Estimator):
    """A start at given base parameters."""

    method = "given"

    def __init__(self, base_params):
        self.base_params = base_params

    def _estimate(self, data):
        b = len(self.base_params)
        return {"base_params": self.base_params, "base_cov": np.eye(b),
                "noise_covariance": np.eye(data.robot.n)}


def test_noise_free_data_make_the_truth_a_fixed_point(arm):
    """Without any noise (exact encoders), the measured output is the one simulated at the
    truth, through the same filter: DIDIM's output error vanishes there, so started at the
    truth it stays. IV at the truth gives least squares' estimate (the instruments are the
    regressor itself)."""
    robot, theta, _, base = arm
    sim, loop = experiment(arm, 1, counts=0.0, increments=2.0**40)
    data = IdentificationData(robot, sim.measured, base=base, processing=PROCESSING)
    truth = base.matrix @ theta
    at_truth = DIDIM(simulator=loop, start=Given(truth), jacobian="regressor").fit(data)
    assert np.linalg.norm(at_truth.base_params_ - truth) < 1e-8 * np.linalg.norm(truth)
    ols = OLS().fit(data).base_params_
    with pytest.warns(DynidWarning, match="did not settle"):  # one step, from the truth
        iv = InstrumentalVariables(simulator=loop, start=Given(truth), weighted=False,
                                   max_iterations=1).fit(data)
    np.testing.assert_allclose(iv.base_params_, ols, rtol=1e-6, atol=1e-9)


def test_iv_matches_its_formula_computed_densely(arm, noisy):
    """With fixed instruments (a simulator that always gives the noise-free twin), the
    estimate and its covariance are those of the formulas on dense matrices; the second pass
    repeats the first, so the iteration stops there."""
    robot, _, _, base = arm
    sim, _ = noisy
    data = IdentificationData(robot, sim.measured[0], base=base, processing=PROCESSING)
    twin = (sim.truth[0],)
    est = InstrumentalVariables(simulator=lambda params: twin, weighted=False,
                                start="ols").fit(data)
    assert est.result_.solver["iterations"] == 2 and est.result_.solver["converged"]
    states = [Processing(**{**vars(data.processing), "delay": None}).apply(
        sim.truth[0].with_signals(velocities=None, accelerations=None), robot)]
    parts = list(zip(data.rows(), data.rows(states=states), strict=True))
    W = np.vstack([w for (w, _, _), _ in parts])
    y = np.vstack([y for (_, y, _), _ in parts])
    keep = np.vstack([k for (_, _, k), _ in parts])
    Z = np.vstack([z for _, (z, _, _) in parts]) * keep[..., None]
    A = np.einsum("mjp,mjq->pq", Z, W)
    theta = np.linalg.solve(A, np.einsum("mjp,mj->p", Z, y))
    np.testing.assert_allclose(est.base_params_, theta, rtol=1e-8, atol=1e-12)
    # B = Σ_t Σ_s Z_tᵀ Γ(t − s) Z_s with Γ Welch's estimate by its definition (Hann segments,
    # half overlap), scaled by rows / (rows − b), through the dense block-Toeplitz matrix.
    e = (y - W @ theta) * keep
    T, n = e.shape
    M = min(SEGMENT, T)
    h = np.hanning(M + 2)[1:-1]
    gamma, norm = np.zeros((M, n, n)), 0.0
    for s0 in range(0, T - M + 1, M // 2):
        x = e[s0:s0 + M] * h[:, None]
        for lag in range(M):
            gamma[lag] += x[lag:].T @ x[:M - lag]
        norm += h @ h
    rows = np.count_nonzero(e)
    gamma *= rows / (rows - base.rank) / norm
    C = np.zeros((T, n, T, n))
    for t in range(T):
        for s in range(max(0, t - M + 1), min(T, t + M)):
            C[t, :, s, :] = gamma[t - s] if t >= s else gamma[s - t].T
    S = np.einsum("tjp,tjsk,skq->pq", Z, C, Z)
    Ainv = np.linalg.inv(A)
    np.testing.assert_allclose(est.base_cov_, Ainv @ S @ Ainv.T, rtol=1e-6,
                               atol=1e-12 * np.abs(est.base_cov_).max())
    # In chunks of 7 decimated rows, far fewer than the lags, the result is the same.
    chunked = IdentificationData(robot, sim.measured[0], base=base, processing=PROCESSING,
                                 chunk_size=35)
    again = InstrumentalVariables(simulator=lambda params: twin, weighted=False,
                                  start="ols").fit(chunked)
    np.testing.assert_allclose(again.base_cov_, est.base_cov_, rtol=1e-8,
                               atol=1e-12 * np.abs(est.base_cov_).max())


def test_least_squares_is_biased_and_the_closed_loop_estimators_are_not(arm, noisy):
    """Over four seeds of 10-count encoder noise fed back by the drives (two for DIDIM): least
    squares is off by several of its standard deviations (the noise of the positions
    correlates with the command); IV and DIDIM's mean errors are a fraction of it, and their
    errors are about as large as their σ say."""
    robot, theta, _, base = arm
    sim, loop = noisy
    truth = base.matrix @ theta
    errors = {"ols": [], "iv": [], "didim": []}
    z = {"iv": [], "didim": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)  # coloured residuals of closed loops
        for rec in sim.measured:
            data = IdentificationData(robot, rec, base=base, processing=PROCESSING)
            errors["ols"].append(OLS().fit(data).base_params_ - truth)
            for name, est in (("iv", InstrumentalVariables(simulator=loop)),
                              ("didim", DIDIM(simulator=loop, tolerance=0.1))):
                if name == "didim" and len(errors["didim"]) == 2:
                    continue  # two seeds of DIDIM (its search takes about 50 simulations)
                est.fit(data)
                errors[name].append(est.base_params_ - truth)
                z[name].append(errors[name][-1] / np.sqrt(np.diag(est.base_cov_)))
    spread = np.std(errors["ols"], axis=0)
    bias = {k: np.median(np.abs(np.mean(e, axis=0)) / spread) for k, e in errors.items()}
    assert bias["ols"] > 2.0
    assert bias["iv"] < 0.5 * bias["ols"]
    assert bias["didim"] < 0.5 * bias["ols"]
    # Their σ keep their promise: the errors over the seeds are about as large (32 z of IV,
    # 16 of DIDIM; over 20 seeds the benchmark finds RMS 0.76 and 1.14).
    for name, values in z.items():
        assert 0.45 < np.sqrt(np.mean(np.square(values))) < 1.8, name


def test_settings_go_to_the_result_file(arm, noisy, tmp_path):
    robot, _, _, base = arm
    sim, loop = noisy
    data = IdentificationData(robot, sim.measured[0], base=base, processing=PROCESSING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)
        est = InstrumentalVariables(simulator=loop, max_iterations=3).fit(data)
    back = load_result(est.result_.save(tmp_path / "iv.json"))
    assert back.method == "iv" and back.covariance_method == "instrumental"
    assert back.settings["simulator"]["control_rate"] == RATE
    assert back.settings["max_iterations"] == 3
    assert back.solver["iterations"] == len(back.solver["changes"])
    from dynid.report.settings import settings_html

    html = settings_html(back)
    assert "control_rate" in html and "velocity_gains" in html and "converged" in html


def test_bad_settings_and_data(arm, noisy):
    robot, _, _, base = arm
    sim, loop = noisy
    with pytest.raises(DataError, match="simulator: expected a callable"):
        InstrumentalVariables(simulator="loop.yaml")
    with pytest.raises(DataError, match="max_iterations"):
        InstrumentalVariables(simulator=loop, max_iterations=0)
    with pytest.raises(DataError, match="jacobian"):
        DIDIM(simulator=loop, jacobian="exact")
    for bad in (1, 2.5, True):
        with pytest.raises(DataError, match=r"segment: expected a whole number .* ≥ 2.*"
                                            r"segment=256\)"):
            DIDIM(simulator=loop, segment=bad)
    with pytest.raises(DataError, match="recordings: expected a whole number"):
        ClosedLoop(robot, arm[2], DURATION, gains=sim.gains, recordings=0)
    with pytest.raises(DataError, match="gains"):
        ClosedLoop(robot, arm[2], DURATION, gains=None)
    data = IdentificationData(robot, sim.measured[0], base=base, processing=PROCESSING)
    compressed = CompressedData(robot, data.system(), base=base)
    with pytest.raises(DataError, match="expected IdentificationData"):
        DIDIM(simulator=loop).fit(compressed)
    with pytest.raises(DataError, match="start"):
        InstrumentalVariables(simulator=loop, start="median").fit(data)


def test_simulators_that_misbehave(arm, noisy):
    robot, _, _, base = arm
    sim, _ = noisy
    data = IdentificationData(robot, sim.measured[0], base=base, processing=PROCESSING)
    short = (sim.truth[0].skip(10),)
    with pytest.raises(DataError, match="samples"):
        InstrumentalVariables(simulator=lambda params: short).fit(data)

    def diverging(params):
        raise DataError("the simulated robot diverged between t = 1 s and 1.004 s")

    with pytest.raises(SolverError, match=r"iteration 1 failed.*start=PhysicallyConsistent"):
        InstrumentalVariables(simulator=diverging).fit(data)
    def unstable(params):  # a run whose states blow up: no Recording holds them
        return (sim.truth[0].with_signals(output=np.full_like(sim.truth[0].output, np.inf)),)

    with pytest.raises(SolverError, match=r"DIDIM: the closed loop .* failed .*non-finite"):
        DIDIM(simulator=unstable).fit(data)


def test_an_iteration_that_does_not_settle_warns(arm, noisy):
    robot, _, _, base = arm
    sim, loop = noisy
    data = IdentificationData(robot, sim.measured[0], base=base, processing=PROCESSING)
    with pytest.warns(DynidWarning, match="did not settle in 1 iterations.*max_iterations"):
        est = InstrumentalVariables(simulator=loop, max_iterations=1, tolerance=1e-9).fit(data)
    assert not est.result_.solver["converged"]


def test_the_command_line_runs_them_from_the_excitation_and_loop_files(arm, tmp_path, capsys):
    """``dynid identify --method iv|didim --excitation --loop`` on a simulated closed-loop
    recording: the estimate is the one of the Python API with the experiment's own
    simulator, and the result file keeps the settings and the files they came from."""
    from dynid.cli import main
    from dynid.hardware import load_loop_settings, save_loop_settings
    from dynid.identify import save_npz
    from dynid.trajectories import save_trajectory

    robot, _, ref, base = arm
    sim, loop = experiment(arm, 1)
    robot_file = tmp_path / "arm2.yaml"
    robot_file.write_text((DATA / "arm2.yaml").read_text())
    npz = save_npz(sim.measured[0], tmp_path / "run.npz")
    excitation = save_trajectory(tmp_path / "excitation.json", ref, robot=robot.name)
    loop_file = save_loop_settings(tmp_path / "loop.yaml", robot, sim.gains, control_rate=RATE,
                                   loops=loop.loops)
    settings = load_loop_settings(loop_file, robot)
    for name in ("velocity", "integral", "position", "velocity_filter"):
        np.testing.assert_array_equal(getattr(settings.gains, name), getattr(sim.gains, name))
    data = IdentificationData(robot, sim.measured[0], base=base, processing=PROCESSING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)
        direct = InstrumentalVariables(simulator=loop).fit(data)
    out = tmp_path / "iv.json"
    code = main(["identify", str(robot_file), str(npz), "-o", str(out), "--method", "iv",
                 "--excitation", str(excitation), "--loop", str(loop_file), "--cutoff", "15",
                 "--decimate", "5", "--quiet"])
    assert code == 0, capsys.readouterr().err
    back = load_result(out)
    assert back.method == "iv"
    np.testing.assert_allclose(back.base_params, direct.base_params_, rtol=1e-6,
                               atol=1e-9 * np.abs(direct.base_params_).max())
    kept = back.settings["simulator"]
    assert kept["control_rate"] == RATE and kept["loop_settings"] == str(loop_file)
    assert kept["excitation"] == str(excitation)
    np.testing.assert_allclose(kept["velocity_gains"], sim.gains.velocity)


GOOD_LOOP = {"format": "dynid-closed-loop", "version": 1, "robot": "arm2", "control_rate": 250,
             "record_every": 1, "loops": {"current_bandwidth": 100, "feedforward": True},
             "drives": {"motor1": {"position": 30, "velocity": 0.8, "integral": 30},
                        "motor2": {"position": 30, "velocity": 0.2, "integral": 30,
                                   "velocity_filter": 0.01}}}


def _edited(path, key, value):
    import json

    data = json.loads(json.dumps(GOOD_LOOP))
    *parents, last = key.split(".")
    node = data
    for k in parents:
        node = node[k]
    if value is None:
        del node[last]
    else:
        node[last] = value
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("key", "value", "message"), [
    ("format", "dynid-trajectory", r"expected \"format: dynid-closed-loop\""),
    ("version", 7, r"version 7 is not supported \(expected 1\)"),
    ("robot", "panda", r"the gains are for robot 'panda', not 'arm2'"),
    ("control_rate", -250, r"control_rate: expected a rate > 0 Hz, e.g. control_rate: 1000, "
                           r"found -250"),
    ("control_rate", None, r"control_rate: expected a rate > 0 Hz.*found None"),
    ("record_every", 0.5, r"record_every: expected a whole number ≥ 1, found 0.5"),
    ("loops", {"a": 3}, r"loops: expected a mapping of current_bandwidth, .* found \['a'\]"),
    ("loops.feedforward", "yes", r"loops.feedforward: expected true or false, found 'yes'"),
    ("loops.substeps", 0, r"loops.substeps: expected a whole number ≥ 1, found 0"),
    ("loops.current_bandwidth", float("nan"), r"loops.current_bandwidth: expected a number > 0"),
    ("drives", [1, 2], r"drives: expected a mapping from each actuator's name"),
    ("drives.motor2", None, r"drives: 1 given for the robot's 2 actuators .* missing "
                            r"\['motor2'\], unknown \[\]"),
    ("drives.motor1.integral", None, r"drives.motor1: expected position, velocity, integral"),
    ("drives.motor1.velocity", 0, r"drives.motor1.velocity: expected a number > 0, found 0"),
    ("drives.motor2.velocity_filter", -1, r"drives.motor2.velocity_filter: expected a number "
                                          r"≥ 0, found -1"),
])
def test_bad_loop_files(arm, tmp_path, key, value, message):
    from dynid.errors import DriveConfigError
    from dynid.hardware import load_loop_settings

    robot = arm[0]
    good = load_loop_settings(_edited(tmp_path / "good.json", "format", GOOD_LOOP["format"]),
                              robot)
    np.testing.assert_array_equal(good.gains.velocity, [0.8, 0.2])
    assert good.loops.current_bandwidth == 100 and good.control_rate == 250
    with pytest.raises(DriveConfigError, match=r"closed-loop settings '.*bad.json': " + message):
        load_loop_settings(_edited(tmp_path / "bad.json", key, value), robot)


def test_recordings_that_do_not_match_the_experiment(arm, noisy, tmp_path):
    from dynid.errors import TrajectoryError
    from dynid.hardware import experiment_loop, save_loop_settings
    from dynid.trajectories import save_trajectory

    robot, _, ref, _ = arm
    sim, _ = noisy
    excitation = save_trajectory(tmp_path / "excitation.json", ref, robot=robot.name)
    loop_file = save_loop_settings(tmp_path / "loop.yaml", robot, sim.gains, control_rate=RATE)
    run = sim.measured[0]
    assert experiment_loop(robot, excitation, loop_file, [run, run]).recordings == 2
    with pytest.raises(DataError, match=r"recordings of \[990, 1000\] samples"):
        experiment_loop(robot, excitation, loop_file, [run, run.select(slice(0, 990))])
    with pytest.raises(DataError, match=r"recording 1 starts at t = 0.04 s; .* untrimmed"):
        experiment_loop(robot, excitation, loop_file, [run.skip(10)])
    other = save_trajectory(tmp_path / "other.json", ref, robot="arm3")
    with pytest.raises(TrajectoryError, match=r"designed for robot 'arm3', not 'arm2'"):
        experiment_loop(robot, other, loop_file, [run])
