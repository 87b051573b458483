"""Rows left out near zero velocity and at rest: the compressed system with rows missing per
output against dense least squares, the whiteness test with gaps, a simulated Coulomb friction
that rests bias and the dead zone does not, the Stäubli TX40 against FIGAROH, bad settings."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
from conftest import dataset

import dynid
from dynid import datasets
from dynid.identify import (
    OLS,
    WLS,
    CompressedData,
    IdentificationData,
    JointSystem,
    Processing,
    Recording,
    load_result,
    whiteness,
)
from dynid.identify.exclusion import rest_segments
from dynid.models import random_robot


# The compressed system with rows missing per output --------------------------------------
@pytest.fixture
def masked():
    rng = np.random.default_rng(0)
    m, n, p = 500, 3, 5
    Y = rng.standard_normal((m, n, p))
    y = rng.standard_normal((m, n))
    keep = rng.uniform(size=(m, n)) > 0.2
    keep[:40] = False  # samples without any row
    C = np.array([[1.0, 0, 0], [0.5, 0.7, 0], [-0.2, 0.3, 0.4]])
    system = JointSystem(n, p)
    for start in range(0, m, 37):
        sl = slice(start, start + 37)
        system.add(Y[sl], y[sl], keep[sl])
    return Y, y, keep, C @ C.T, system


def _dense(Y, y, keep, cov):
    """Per sample, the kept rows whitened by the covariance of the outputs kept, stacked."""
    rows, out = [], []
    for k in range(len(y)):
        S = np.flatnonzero(keep[k])
        if len(S):
            Li = np.linalg.inv(np.linalg.cholesky(cov[np.ix_(S, S)]))
            rows.append(Li @ Y[k, S])
            out.append(Li @ y[k, S])
    return np.vstack(rows), np.concatenate(out)


def test_missing_rows_give_dense_least_squares_on_the_rows_kept(masked):
    """Ordinary, diagonally weighted and generalized least squares (a sample whitened by the
    covariance of the outputs it keeps), the sandwich covariance, residual Gram and residual
    covariance, against dense computations on the kept rows."""
    Y, y, keep, S, system = masked
    assert system.n_samples == int(keep.any(axis=1).sum())
    np.testing.assert_array_equal(system.rows, keep.sum(axis=0))
    np.testing.assert_array_equal(system.pairs, keep.T.astype(int) @ keep.astype(int))
    for cov in (np.eye(3), np.diag([0.5, 2.0, 1.0]), S):
        W, z = _dense(Y, y, keep, cov)
        got = system.system(covariance=None if cov is np.eye(3) else cov)
        assert got.n_rows == keep.sum()
        np.testing.assert_allclose(got.solve(), np.linalg.lstsq(W, z, rcond=None)[0],
                                   rtol=1e-10)
        np.testing.assert_allclose(got.inverse_information(), np.linalg.inv(W.T @ W),
                                   rtol=1e-9)
    # Sandwich: A = Σ W_kᵀ V_k⁻¹ W_k, G = Σ W_kᵀ V_k⁻¹ Σ_k V_k⁻¹ W_k over the kept outputs.
    V = np.diag([0.5, 2.0, 1.0])
    A, G = np.zeros((5, 5)), np.zeros((5, 5))
    for k in range(len(y)):
        Sk = np.flatnonzero(keep[k])
        Vi = np.linalg.inv(V[np.ix_(Sk, Sk)])
        A += Y[k, Sk].T @ Vi @ Y[k, Sk]
        G += Y[k, Sk].T @ Vi @ S[np.ix_(Sk, Sk)] @ Vi @ Y[k, Sk]
    np.testing.assert_allclose(system.covariance(V, S), np.linalg.solve(A, np.linalg.solve(A, G).T),
                               rtol=1e-9, atol=1e-14)
    theta = np.random.default_rng(1).standard_normal(5)
    E = np.where(keep, np.einsum("kip,p->ki", Y, theta) - y, 0.0)
    np.testing.assert_allclose(system.residuals_gram(theta), E.T @ E, rtol=1e-10)
    N = keep.T.astype(float) @ keep
    np.testing.assert_allclose(system.residual_covariance(theta),
                               E.T @ E / (N * (1 - 5 / keep.sum())), rtol=1e-10)


def test_a_system_without_missing_rows_is_unchanged(masked):
    Y, y, _, S, _ = masked
    full, plain = JointSystem(3, 5), JointSystem(3, 5)
    full.add(Y, y, np.ones(y.shape, dtype=bool))
    plain.add(Y, y)
    for cov in (None, S):
        np.testing.assert_allclose(full.system(covariance=cov).R,
                                   plain.system(covariance=cov).R, rtol=1e-12, atol=1e-12)
    theta = np.ones(5)
    np.testing.assert_allclose(plain.residual_covariance(theta),
                               plain.residuals_gram(theta) / (len(y) - 5 / 3), rtol=1e-12)
    with pytest.raises(dynid.DataError, match=r"keep: expected booleans of shape \(500, 3\)"):
        full.add(Y, y, np.ones((500, 2), dtype=bool))


def test_streamed_chunks_may_leave_rows_out():
    robot = random_robot(2, seed=1, friction=True)
    rng = np.random.default_rng(0)
    q, v, a = (rng.standard_normal((300, 2)) for _ in range(3))
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    keep = np.abs(v) > 0.3
    data = CompressedData.from_chunks(robot, [(q, v, a, y, keep)])
    np.testing.assert_array_equal(data.system().rows, keep.sum(axis=0))
    with pytest.raises(dynid.DataError, match=r"expected \(q, v, a, y\) or \(q, v, a, y, keep\)"):
        CompressedData.from_chunks(robot, [(q, v, a)])


# Whiteness with gaps ------------------------------------------------------------------------
def test_whiteness_with_gaps():
    """NaN rows: white noise stays white, AR(1) noise keeps its lag-1 autocorrelation φ and
    its long-run factor √((1 + φ)/(1 − φ)); the series' samples are counted with their
    gaps."""
    rng = np.random.default_rng(3)
    flags = []
    for _ in range(100):
        e = rng.standard_normal((3000, 2))
        e[rng.uniform(size=e.shape) < 0.2] = np.nan
        e[1000:1400] = np.nan  # a rest
        w = whiteness([e], ("a", "b"))
        flags.append(w.coloured.any())
    assert np.mean(flags) < 0.05 and w.n_samples == 3000
    phi = 0.6
    e = scipy.signal.lfilter([1.0], [1.0, -phi], rng.standard_normal((40000, 1)), axis=0)
    e[rng.uniform(size=e.shape) < 0.3] = np.nan
    w = whiteness([e], ("joint1",))
    assert w.autocorrelation[0, 0] == pytest.approx(phi, abs=0.03)
    assert w.sigma_factor[0] == pytest.approx(np.sqrt((1 + phi) / (1 - phi)), rel=0.1)


# Rest segments ----------------------------------------------------------------------------
def test_rest_segments_need_their_duration_and_close_short_gaps():
    t = np.arange(100) * 0.01
    still = np.zeros(100, dtype=bool)
    still[10:15] = True   # 0.04 s: too short
    still[30:50] = True   # 0.19 s
    still[53:70] = True   # 0.16 s, after a gap of 0.03 s: closed
    still[90:100] = True  # 0.09 s: too short
    want = np.zeros(100, dtype=bool)
    want[30:70] = True
    np.testing.assert_array_equal(rest_segments(still, t, 0.1), want)
    np.testing.assert_array_equal(rest_segments(still, t, 0.5), np.zeros(100, dtype=bool))


# A Coulomb friction biased by rests, and not with the dead zone ----------------------------
def _stop(t, start, end):
    """A smooth stop: 1 before ``start``, 0 after ``end``, cosine in between; and its first
    two derivatives."""
    s = np.clip((t - start) / (end - start), 0, 1)
    inside = (t > start) & (t < end)
    w = 0.5 * (1 + np.cos(np.pi * s))
    k = np.pi / (end - start)
    return w, np.where(inside, -0.5 * k * np.sin(np.pi * s), 0.0), \
        np.where(inside, -0.5 * k**2 * np.cos(np.pi * s), 0.0)


def _resting_robot(seed=0):
    """A 2-DOF arm: joint 1 stops at 8 s, joint 2 at 10 s, both rest until 12 s. The output
    is the model's with the true states, whose Coulomb term is 0 at rest (static friction
    holds the arm); the positions carry noise, so the processed velocity at rest is noise and
    its sign ±1. 500 Hz."""
    robot = random_robot(2, seed=1, friction=True)
    rng = np.random.default_rng(seed)
    t = np.arange(0, 12, 1 / 500)
    q, v, a = (np.zeros((len(t), 2)) for _ in range(3))
    for j, (f, stop) in enumerate(((0.45, 8.0), (0.7, 10.0))):
        w, w1, w2 = _stop(t, stop - 1.0, stop)
        ph = 2 * np.pi * f * t
        m = 0.8 * np.sin(ph) + 0.3 * np.sin(2.7 * ph)
        m1 = 2 * np.pi * f * (0.8 * np.cos(ph) + 0.81 * np.cos(2.7 * ph))
        m2 = -(2 * np.pi * f) ** 2 * (0.8 * np.sin(ph) + 2.187 * np.sin(2.7 * ph))
        q[:, j], v[:, j], a[:, j] = w * m, w1 * m + w * m1, w2 * m + 2 * w1 * m1 + w * m2
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    rec = Recording(t, q + 2e-4 * rng.standard_normal(q.shape),
                    y + 0.02 * rng.standard_normal(y.shape))
    return robot, rec, v


def test_rests_bias_coulomb_friction_and_the_dead_zone_removes_the_bias():
    """Without exclusion the rows at rest (sign ±1 at random, no friction in the output) pull
    each Coulomb estimate towards zero, by more than half the share of its rows at rest (1/3
    for joint 1, 1/6 for joint 2: the slow samples before each stop add to it); with the
    default dead zone and rests both are within 4 σ of the truth. The positions are
    low-passed at 1.5 times their bandwidth: there the sign of the velocity noise at rest
    flips slowly, so the decimation filter does not average it away (at the automatic
    cutoff, three times higher, it averages much of it, and the pull shrinks to a few σ).
    The result records the thresholds and what was left out."""
    from dynid.identify.filters import signal_bandwidth

    robot, rec, v_true = _resting_robot()
    fc = [robot.parameters.index(f"joint{j}.fc") for j in (1, 2)]
    truth = robot.prior[fc]
    cutoff = float(f"{1.5 * signal_bandwidth(rec.positions, rec.rate).max():.3g}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dynid.DynidWarning)  # the residual of rests is coloured
        plain = OLS().fit(IdentificationData(
            robot, rec, processing=Processing(cutoff=cutoff, deadzone=None)))
        data = IdentificationData(robot, rec, processing=Processing(cutoff=cutoff))
        est = OLS().fit(data)
    share = np.array([4.0, 2.0]) / 12.0
    sigma = np.sqrt(np.diag(est.cov_)[fc])
    print(f"Coulomb friction {truth.round(4)}: without exclusion {plain.params_[fc].round(4)}, "
          f"with the dead zone {est.params_[fc].round(4)} ± {sigma.round(4)}")
    assert np.all(np.abs(est.params_[fc] - truth) < 4 * sigma)
    assert np.all(plain.params_[fc] < truth * (1 - share / 2))
    assert np.all(np.abs(plain.params_[fc] - truth) > 10 * sigma)
    # What was left out: 2 s at rest, and per joint the rows of slow samples (joint 1 from
    # 8 s on), counted independently on the processed velocities and the thresholds.
    proc = data.processing
    out = proc.outcome.excluded
    thresholds = np.array(out.thresholds)
    assert proc.deadzone == "auto" and out.rest_duration == 0.1
    assert out.rest_seconds == pytest.approx(2.0, abs=0.1)
    processed = data.processed[0]
    D = proc.decimate
    assert D > 1
    h = len(dynid.identify.data.decimation_filter(D)) // 2
    centres = np.arange(h, processed.n_samples - h, D)
    at_rest = np.array([np.any(processed.time[max(c - h, 0):c + h + 1] >= 10.0 - 1e-9)
                        & np.any(np.all(np.abs(processed.velocities[c - h:c + h + 1])
                                        < thresholds, axis=1)) for c in centres])
    slow = np.abs(processed.velocities[centres]) < thresholds
    assert out.rows == (len(centres),) * 2
    assert abs(out.rest - at_rest.sum()) <= 2
    np.testing.assert_allclose(out.deadzone, (slow & ~at_rest[:, None]).sum(axis=0), atol=2)
    assert est.result_.n_samples == len(centres) - out.rest
    # Thresholds: 1 % of the peak speed or 3 σ of the velocity noise, above the true speed
    # at rest (0) and below the motion's.
    peak = np.abs(processed.velocities).max(axis=0)
    assert np.all(thresholds >= 0.01 * peak * (1 - 1e-12))
    assert np.all(thresholds < 0.1 * np.abs(v_true).max(axis=0))


def test_exclusion_is_recorded_in_result_files(tmp_path):
    robot, rec, _ = _resting_robot(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dynid.DynidWarning)
        result = WLS().fit(IdentificationData(robot, rec)).result_
    back = load_result(result.save(tmp_path / "r.json"))
    assert back.processing == result.processing
    assert back.processing.outcome.excluded == result.processing.outcome.excluded
    assert "at rest" in back.processing.summary()
    # Identifying again with the saved processing chooses the same thresholds.
    again = IdentificationData(robot, rec, processing=back.processing)
    assert again.processing.outcome.excluded == result.processing.outcome.excluded


# Bad settings ------------------------------------------------------------------------------
def test_bad_exclusion_settings_are_reported():
    robot, rec, _ = _resting_robot()
    for settings, match in (
            ({"deadzone": -0.1}, r"deadzone: expected a speed ≥ 0 in rad/s .* found -0\.1; "
                                 r"e\.g\. deadzone=0\.05"),
            ({"deadzone": [0.1, float("nan")]}, r"deadzone\[1\]: expected a speed ≥ 0 .*nan"),
            ({"deadzone": "off"}, r"deadzone: expected 'auto', None or speeds .*'off'"),
            ({"deadzone": []}, r"deadzone: expected one speed per joint, found none"),
            ({"rest": -1.0}, r"rest: expected a duration > 0 s, 'auto' \(0\.1 s\) or None, "
                             r"found -1\.0; e\.g\. rest=0\.5"),
            ({"outcome": {"rate": 1}}, r"outcome: expected an Outcome filled by identification")):
        with pytest.raises(dynid.DataError, match=match):
            Processing(**settings)
    fixed = dict(cutoff=10.0, decimate=20)
    with pytest.raises(dynid.DataError, match=r"deadzone: expected one speed or 2 \(one per "
                                              r"joint of .*joint1, joint2\), found 3; e\.g\. "
                                              r"deadzone=\[0\.05, 0\.05\]"):
        IdentificationData(robot, rec, processing=Processing(deadzone=[0.1] * 3, **fixed))
    with pytest.raises(dynid.DataError, match=r"dead zone: every row of joint2 is left out "
                                              r"\(its dead zone: 50 rad/s \(peak .*\); "
                                              r".*deadzone=\[0\.01, 12\.5\], or set "
                                              r"deadzone=None"):
        IdentificationData(robot, rec, processing=Processing(deadzone=[0.04, 50.0], **fixed))
    with pytest.raises(dynid.DataError, match=r"derivatives='velocities': the recording "
                                              r"carries no velocities; .*derivatives='positions'"):
        IdentificationData(robot, rec, processing=Processing(derivatives="velocities"))


# The Stäubli TX40 (FIGAROH) -----------------------------------------------------------------
#: FIGAROH's per-joint thresholds for the TX40 (dq_lim_def of its T40X_config.yaml), rad/s,
#: and its WLS estimate of joint 1's Coulomb friction (fs1 of reference/TX40_bp_5.csv), N·m.
FIGAROH_DQ_LIM = np.array([0.05009095, 0.05009095, 0.07504916, 0.0715585, 0.05585054, 0.12217305])
FIGAROH_FS1 = 6.967


@pytest.fixture(scope="module")
def tx40_data():
    """The TX40 with FIGAROH's model (:func:`dynid.datasets.tx40_robot`: joint friction with
    an offset, rotor inertias, the coupled wrist) and its recording as the drives give it:
    motor positions and motor torques at 5 kHz."""
    path = dataset("staubli_tx40_figaroh")
    robot = datasets.tx40_robot(path).with_output("motor_torque")
    q_m = np.loadtxt(path / "data" / "pos_read_data.csv", delimiter=",", skiprows=1)
    tau_m = np.loadtxt(path / "data" / "curr_data.csv", delimiter=",", skiprows=1)
    t = np.arange(len(q_m)) / 5000.0  # no time column: 5 kHz
    return robot, Recording(t, q_m, tau_m, space="actuator", output_kind="motor_torque",
                            names=robot.actuator_names)


def test_tx40_dead_zone_is_figaroh_and_removes_the_bias_of_the_final_rest(tx40_data):
    """The automatic thresholds are FIGAROH's hand-set ones within 10 % (both are about 1 % of
    each joint's peak speed), the final rest is found (about 1.5 s), and joint 1's Coulomb
    friction is FIGAROH's published estimate within 2 σ, where without exclusion it is more
    than 10 % low (13 % at the automatic cutoff: a cutoff half as high, whose velocity signs
    at rest flip more slowly, pulls harder) and cutting the last 1.3 s by hand is not enough
    (the rows near zero velocity still pull it down)."""
    robot, rec = tx40_data
    base = dynid.base_parameters(robot)
    i = robot.parameters.index("joint_1.fc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dynid.DynidWarning)  # the real residual is coloured
        data = IdentificationData(robot, rec, base=base)
        est = OLS().fit(data)
        fixed = replace(data.processing, deadzone=None, outcome=None)
        plain = OLS().fit(IdentificationData(robot, rec, base=base, processing=fixed))
        cut = OLS().fit(IdentificationData(robot, rec.select(slice(0, -6500)), base=base,
                                           processing=fixed))
    proc = data.processing
    sigma = np.sqrt(est.cov_[i, i])
    print(proc.summary())
    thresholds = proc.outcome.excluded.thresholds
    print(f"thresholds {np.round(thresholds, 4)} rad/s, FIGAROH's {FIGAROH_DQ_LIM.round(4)}")
    print(f"joint 1 Coulomb friction: {est.params_[i]:.3f} ± {sigma:.3f} N·m with the dead zone, "
          f"{plain.params_[i]:.3f} without, {cut.params_[i]:.3f} with the last 1.3 s cut, "
          f"FIGAROH {FIGAROH_FS1}")
    np.testing.assert_allclose(thresholds, FIGAROH_DQ_LIM, rtol=0.1)
    assert 1.3 < proc.outcome.excluded.rest_seconds < 1.7
    assert abs(est.params_[i] - FIGAROH_FS1) < 2 * sigma
    assert plain.params_[i] < 0.9 * FIGAROH_FS1 and cut.params_[i] < 0.9 * FIGAROH_FS1


def test_command_line_dead_zone_and_rest(tmp_path, capsys):
    from dynid.cli import main
    from dynid.hardware import FourierReference
    from dynid.identify import save_npz

    robot = dynid.load_robot("panda")
    q, v, a = FourierReference.random(robot, frequency=0.1, ramp=0.0, seed=1)(
        np.arange(0.0, 12.0, 0.01))
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    path = save_npz(Recording(np.arange(len(q)) / 100, q, y + 0.01, velocities=v),
                    tmp_path / "run.npz")
    out = tmp_path / "r.json"
    speeds = ",".join(["0.02"] * 7)
    assert main(["identify", "panda", str(path), "-o", str(out), "--method", "ols",
                 "--derivatives", "velocities", "--deadzone", speeds, "--rest", "none"]) == 0
    proc = load_result(out).processing
    assert proc.deadzone == (0.02,) * 7 and proc.rest is None
    assert proc.outcome.excluded.thresholds == (0.02,) * 7
    assert proc.derivatives == "velocities" and proc.outcome.excluded.rest == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["identify", "panda", str(path), "-o", str(out), "--deadzone", "0.1,-1"])
    assert info.value.code == 2
    assert "argument --deadzone: expected a finite number ≥ 0, found -1" in \
        capsys.readouterr().err
