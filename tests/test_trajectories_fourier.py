"""Fourier trajectories: the analytic derivatives, the ramp, sampling, files and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numerics import assert_derivative, derivative

from dynid import TrajectoryError
from dynid.trajectories import DesignSettings, FourierTrajectory
from dynid.trajectories.fourier import envelope
from dynid.trajectories.io import load_trajectory, read_trajectory_file, save_trajectory


def random_trajectory(rng, n=3, harmonics=4, frequency=0.2, **kw) -> FourierTrajectory:
    C = rng.standard_normal((n, 1 + 2 * harmonics))
    return FourierTrajectory(C, frequency, [f"j{i}" for i in range(n)], **kw)


@pytest.mark.parametrize("ramp", [0.0, 2.0])
def test_velocity_and_acceleration_are_time_derivatives(ramp):
    """q̇ and q̈ against finite differences in time, across the ramps too."""
    rng = np.random.default_rng(0)
    traj = random_trajectory(rng, ramp=ramp, periods=2)
    t = np.linspace(0.01, traj.duration - 0.01, 301)
    _, v, a = traj.evaluate(t)
    ones = np.ones_like(t)
    scale = 1 / (traj.harmonics * traj.omega)   # s in which the top harmonic turns 1 rad
    for k, (name, want) in enumerate((("q̇", v), ("q̈", a))):
        fd = derivative(lambda x, k=k: traj.evaluate(x)[k], t, ones, scale=scale)
        assert_derivative(want, fd, what=name)


def test_abdellatif_closed_form():
    """Abdellatif (12), (14), (15) written out for one coordinate with two harmonics."""
    x0, mu, nu, f = 0.3, [0.5, -0.2], [0.1, 0.4], 0.25
    traj = FourierTrajectory([[x0, *mu, *nu]], f, ["j"])
    w = 2 * np.pi * f
    t = np.linspace(0, 7, 50)
    q = x0 + sum(mu[k] / ((k + 1) * w) * np.sin((k + 1) * w * t)
                 - nu[k] / ((k + 1) * w) * np.cos((k + 1) * w * t) for k in range(2))
    v = sum(mu[k] * np.cos((k + 1) * w * t) + nu[k] * np.sin((k + 1) * w * t) for k in range(2))
    a = sum((k + 1) * w * (-mu[k] * np.sin((k + 1) * w * t) + nu[k] * np.cos((k + 1) * w * t))
            for k in range(2))
    for got, want in zip(traj.evaluate(t), (q, v, a), strict=True):
        np.testing.assert_allclose(got[:, 0], want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("ramp", [0.0, 3.0])
def test_basis_matrices_in_closed_form(ramp):
    """The columns of B_q are 1, s(t) sin(kωτ)/(kω) and −s(t) cos(kωτ)/(kω) with τ = t − ramp
    and s the quintic ramp 10u³ − 15u⁴ + 6u⁵ (1 between the ramps); B_v and B_a are their
    time derivatives (central differences); ``evaluate`` is B c for every coordinate."""
    rng = np.random.default_rng(1)
    traj = random_trajectory(rng, n=2, ramp=ramp)
    h, w = traj.harmonics, traj.omega
    t = np.linspace(1e-3, traj.duration - 1e-3, 97)
    Bq, Bv, Ba = traj.basis(t)
    if ramp > 0:
        u = np.clip(np.minimum(t, traj.duration - t) / ramp, 0.0, 1.0)
        s = 10 * u**3 - 15 * u**4 + 6 * u**5
    else:
        s = np.ones_like(t)
    k = np.arange(1, h + 1) * w
    tau = (t - ramp)[:, None]
    np.testing.assert_allclose(Bq[:, 0], 1.0)
    np.testing.assert_allclose(Bq[:, 1:h + 1], s[:, None] * np.sin(k * tau) / k, atol=1e-12)
    np.testing.assert_allclose(Bq[:, h + 1:], -s[:, None] * np.cos(k * tau) / k, atol=1e-12)
    ones = np.ones_like(t)
    for k, want in enumerate((Bv, Ba)):
        fd = derivative(lambda x, k=k: traj.basis(x)[k], t, ones, scale=1 / (h * w))
        assert_derivative(want, fd, what="B_v" if k == 0 else "B_a")
    for B, x in zip((Bq, Bv, Ba), traj.evaluate(t), strict=True):
        np.testing.assert_allclose(x, B @ traj.coefficients.T, rtol=1e-12, atol=1e-12)


def test_ramp_starts_and_ends_at_rest_and_joins_the_periodic_motion():
    rng = np.random.default_rng(2)
    periodic = random_trajectory(rng)
    ramped = FourierTrajectory(periodic.coefficients, periodic.frequency, periodic.names,
                               ramp=4.0, periods=2)
    assert ramped.duration == pytest.approx(8.0 + 2 * periodic.period)
    for t_end in (0.0, ramped.duration):
        q, v, a = ramped.evaluate([t_end])
        np.testing.assert_allclose(q[0], periodic.offsets, atol=1e-12)
        np.testing.assert_allclose(v[0], 0, atol=1e-12)
        np.testing.assert_allclose(a[0], 0, atol=1e-12)
    # Between the ramps, the ramped trajectory is the periodic one, delayed by the ramp.
    t = np.linspace(4.0, 4.0 + 2 * periodic.period, 60)
    for x, y in zip(ramped.evaluate(t), periodic.evaluate(t - 4.0), strict=True):
        np.testing.assert_allclose(x, y, atol=1e-12)
    # The envelope is C² at the junctions: value, slope and curvature match from both sides.
    for t0 in (4.0, 4.0 + 2 * periodic.period):
        left = envelope(np.array([t0 - 1e-9]), 4.0, 2 * periodic.period)
        right = envelope(np.array([t0 + 1e-9]), 4.0, 2 * periodic.period)
        for x, y in zip(left, right, strict=True):
            np.testing.assert_allclose(x, y, atol=1e-6)


def test_sampling_at_a_drive_rate():
    traj = random_trajectory(np.random.default_rng(3), ramp=1.0)
    s = traj.sample(250.0)
    assert s.t[0] == 0 and s.t[-1] == pytest.approx(traj.duration)
    np.testing.assert_allclose(np.diff(s.t), 1 / 250.0)
    assert len(s.t) == round(traj.duration * 250.0) + 1
    assert s.q.shape == s.v.shape == s.a.shape == (len(s.t), traj.n)
    # The drives start and stop at rest at the offsets (the ramps' ends are sampled).
    for end in (0, -1):
        np.testing.assert_allclose(s.q[end], traj.offsets, atol=1e-12)
        np.testing.assert_allclose(s.v[end], 0, atol=1e-12)
        np.testing.assert_allclose(s.a[end], 0, atol=1e-12)
    assert s.names == traj.names and (s.space, s.unit) == ("basis", "si")
    with pytest.raises(TrajectoryError, match="rate: expected a sample rate > 0"):
        traj.sample(0.0)


def test_file_round_trip_is_exact(tmp_path):
    traj = random_trajectory(np.random.default_rng(4), ramp=2.5, periods=3)
    settings = DesignSettings(harmonics=4, frequency=0.2, boundary="ramp", ramp=2.5, periods=3,
                              noise=(0.1, 0.2, 0.3), fixed={"j1": 0.5},
                              cartesian=[{"frame": "tool", "lower": [-np.inf, -1, 0.1],
                                          "upper": [1, 1, np.inf]}])
    path = save_trajectory(tmp_path / "t.json", traj, settings=settings, robot="r",
                           summary={"score": np.inf})
    json.loads(path.read_text())          # standard JSON: no bare Infinity
    back = read_trajectory_file(path)
    np.testing.assert_array_equal(back.trajectory.coefficients, traj.coefficients)
    assert back.trajectory.names == traj.names and back.trajectory.ramp == 2.5
    assert back.settings == settings and back.robot == "r"
    assert back.settings.cartesian[0].lower[0] == -np.inf
    np.testing.assert_array_equal(load_trajectory(path).evaluate([1.3])[1],
                                  traj.evaluate([1.3])[1])


def test_file_errors(tmp_path):
    with pytest.raises(TrajectoryError, match="does not exist"):
        load_trajectory(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(TrajectoryError, match="not a dynid trajectory file"):
        load_trajectory(bad)
    bad.write_text("{not json")
    with pytest.raises(TrajectoryError, match="not valid JSON"):
        load_trajectory(bad)
    bad.write_text('{"format": "dynid-trajectory", "version": 1, "robot": "r"}')
    with pytest.raises(TrajectoryError, match=r"bad\.json'.*expected a \"trajectory\" entry.*"
                       "found none"):
        load_trajectory(bad)
    bad.write_text('{"format": "dynid-trajectory", "version": 1, "trajectory": [1, 2]}')
    with pytest.raises(TrajectoryError, match=r"expected a \"trajectory\" entry.*found \[1, 2\]"):
        load_trajectory(bad)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"coefficients": np.zeros((2, 1))}, "at least one harmonic"),
    ({"coefficients": np.zeros((2, 4))}, "at least one harmonic"),
    ({"frequency": 0.0}, "frequency: expected a fundamental frequency > 0"),
    ({"frequency": -0.1}, "frequency: expected a fundamental frequency > 0"),
    ({"frequency": np.nan}, "frequency: expected a fundamental frequency > 0"),
    ({"names": ["a", "a"]}, "distinct coordinate names"),
    ({"space": "joint"}, "space: expected one of"),
    ({"unit": "increments"}, "'increments' in actuator space"),
    ({"ramp": -1.0}, "ramp: expected a duration"),
    ({"periods": 0}, "periods: expected a whole number"),
    ({"coefficients": np.full((2, 3), np.nan)}, "expected finite values"),
])
def test_bad_trajectories(kwargs, match):
    args = {"coefficients": np.zeros((2, 3)), "frequency": 0.1, "names": ["a", "b"]}
    args.update(kwargs)
    with pytest.raises(TrajectoryError, match=match):
        FourierTrajectory(args.pop("coefficients"), args.pop("frequency"), args.pop("names"),
                          **args)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"harmonics": 0}, "harmonics: expected a whole number from 1 to 50, found 0"),
    ({"harmonics": 2.5}, "harmonics: expected a whole number from 1 to 50, found 2.5"),
    ({"harmonics": 10**12}, "harmonics: expected a whole number from 1 to 50"),
    ({"frequency": 0.0}, "frequency: expected a fundamental frequency > 0"),
    ({"frequency": -2.0}, "frequency: expected a fundamental frequency > 0"),
    ({"criterion": "a-optimal"}, "criterion: expected one of"),
    ({"optimizer": "newton"}, "optimizer: expected one of"),
    ({"boundary": "ramp", "ramp": 0.0}, "needs a ramp duration > 0"),
    ({"margin": 1.0}, "margin: expected a fraction"),
    ({"samples": 2}, "samples: expected a whole number from 8 to 100000, found 2"),
    ({"starts": 0}, "starts: expected a whole number from 1 to 1000"),
    ({"periods": 10**9}, "periods: expected a whole number from 1 to 1000"),
    ({"max_iterations": 10**30}, r"max_iterations: expected a whole number from 1 to 100000, "
                                 r"found 1000000000000000000000000000000"),
])
def test_bad_settings(kwargs, match):
    with pytest.raises(TrajectoryError, match=match):
        DesignSettings(**kwargs)
