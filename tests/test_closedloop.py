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
    at_truth = DIDIM(simulator=loop, start=Given(truth)).fit(data)
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
    # Newey–West: Bartlett weights over L lags of g_t = Σ_j z_tj e_tj.
    g = np.einsum("mjp,mj->mp", Z, y - W @ theta)
    L = int(np.ceil(4 * (data.processed[0].n_samples / PROCESSING.decimate / 100) ** (2 / 9)))
    S = g.T @ g + sum((1 - lag / (L + 1)) * (g[:-lag].T @ g[lag:] + g[lag:].T @ g[:-lag])
                      for lag in range(1, L + 1))
    Ainv = np.linalg.inv(A)
    np.testing.assert_allclose(est.base_cov_, Ainv @ S @ Ainv.T, rtol=1e-6,
                               atol=1e-12 * np.abs(est.base_cov_).max())


def test_least_squares_is_biased_and_the_closed_loop_estimators_are_not(arm, noisy):
    """Over four seeds of 10-count encoder noise fed back by the drives: least squares is off
    by several of its standard deviations (the noise of the positions correlates with the
    command); IV and DIDIM's mean errors are a fraction of it."""
    robot, theta, _, base = arm
    sim, loop = noisy
    truth = base.matrix @ theta
    errors = {"ols": [], "iv": [], "didim": []}
    z_iv = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DynidWarning)  # coloured residuals of closed loops
        for rec in sim.measured:
            data = IdentificationData(robot, rec, base=base, processing=PROCESSING)
            errors["ols"].append(OLS().fit(data).base_params_ - truth)
            iv = InstrumentalVariables(simulator=loop).fit(data)
            errors["iv"].append(iv.base_params_ - truth)
            z_iv.append(errors["iv"][-1] / np.sqrt(np.diag(iv.base_cov_)))
            errors["didim"].append(DIDIM(simulator=loop, tolerance=0.1).fit(data).base_params_
                                   - truth)
    spread = np.std(errors["ols"], axis=0)
    bias = {k: np.median(np.abs(np.mean(e, axis=0)) / spread) for k, e in errors.items()}
    assert bias["ols"] > 2.0
    assert bias["iv"] < 0.5 * bias["ols"]
    assert bias["didim"] < 0.5 * bias["ols"]
    # IV's σ (Newey–West) is not optimistic: its errors stay within them.
    assert np.sqrt(np.mean(np.square(z_iv))) < 1.5


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


def test_the_command_line_says_how_to_run_them(tmp_path, capsys):
    from conftest import arm_files

    from dynid.cli import main

    robot_file, _, npz = arm_files(tmp_path)
    for method, name in (("iv", "InstrumentalVariables"), ("didim", "DIDIM")):
        code = main(["identify", str(robot_file), str(npz), "-o", str(tmp_path / "r.json"),
                     "--method", method, "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and f"{name}(simulator=dynid.hardware.ClosedLoop(" in err
        assert not (tmp_path / "r.json").exists()
