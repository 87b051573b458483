"""Processing: zero-phase filtering, differentiation, period averaging, spectral states,
decimation of the regressor and the output alike, actuator-side recordings."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.signal
from numerics import sum_rounding

import dynid
from dynid.hardware import FourierReference, simulate
from dynid.identify import (
    GaussMarkov,
    IdentificationData,
    Processing,
    Recording,
    average_periods,
    differentiate,
    lowpass,
    spectral_states,
    validate,
)
from dynid.identify.data import decimate, decimation_filter
from dynid.models import random_robot


def test_lowpass_has_no_delay_and_removes_high_frequencies():
    rate = 500.0
    t = np.arange(0, 4, 1 / rate)
    slow, fast = np.sin(2 * np.pi * 1.0 * t), 0.3 * np.sin(2 * np.pi * 80 * t)
    out = lowpass(np.column_stack([slow + fast]), rate, 10.0)[:, 0]
    inner = slice(200, -200)
    assert np.abs(out - slow)[inner].max() < 2e-3  # zero phase: no lag of the 1 Hz wave
    with pytest.raises(dynid.DataError, match="cutoff: expected a frequency between 0 and"):
        lowpass(slow[:, None], rate, 300.0)
    with pytest.raises(dynid.DataError, match="too few for an order-4 filter"):
        lowpass(slow[:12, None], rate, 10.0)


def test_differentiation_is_second_order():
    t = np.sort(np.random.default_rng(0).uniform(0, 2, 400))  # non-uniform sampling
    x = np.sin(3 * t)[:, None]
    err = np.abs(differentiate(x, t)[:, 0] - 3 * np.cos(3 * t))
    dt = np.diff(t).max()
    assert err.max() < 30 * dt**2


@pytest.mark.parametrize("periodic", [False, True])
def test_uniform_differentiation_is_fourth_order(periodic):
    """Uniform samples: the error of the fourth-order stencil on a sinusoid is its leading
    term ω (ω h)⁴ / 30, and halving h divides it by 16; one period of a periodic signal is
    differentiated so at every sample (the stencil wraps around), any other signal at all but
    two samples at each end (second order there)."""
    w = 3.0
    worst = []
    for N in (100, 200):
        span = 2 * np.pi / w if periodic else 2.0
        t = np.arange(N) * span / N
        h = span / N
        err = np.abs(differentiate(np.sin(w * t)[:, None], t, periodic=periodic)[:, 0]
                     - w * np.cos(w * t))
        inner = err if periodic else err[2:-2]
        bound = w * (w * h) ** 4 / 30
        assert 0.9 * bound < inner.max() < 1.01 * bound
        worst.append(inner.max())
        if not periodic:
            assert err[[0, 1, -2, -1]].max() < w * (w * h) ** 2
    assert 15 < worst[0] / worst[1] < 17


def test_spectral_states_are_exact_for_a_band_limited_period():
    rate, P = 100.0, 400  # a 4 s period
    t = np.arange(P) / rate
    w = 2 * np.pi / 4.0
    q = np.column_stack([np.sin(w * t) + 0.2 * np.cos(3 * w * t), 0.5 * np.sin(5 * w * t)])
    noise = 0.01 * np.sin(2 * np.pi * 30 * t)[:, None]
    qf, v, a = spectral_states(q + noise, rate, cutoff=6 / 4.0)
    np.testing.assert_allclose(qf, q, atol=1e-12)
    np.testing.assert_allclose(v[:, 0], w * np.cos(w * t) - 0.6 * w * np.sin(3 * w * t),
                               atol=1e-10)
    np.testing.assert_allclose(a[:, 1], -0.5 * 25 * w**2 * np.sin(5 * w * t), atol=1e-10)


def test_period_average_estimates_the_full_noise_covariance():
    """Correlated noise across three channels: the spread between periods gives its
    covariance (Abdellatif 3.2) and the averaged signal converges to the clean one."""
    rng = np.random.default_rng(1)
    rate, period, n_periods = 100.0, 2.0, 41
    t = np.arange(int(n_periods * period * rate)) / rate
    clean = np.column_stack([np.sin(np.pi * t + k) for k in range(3)])
    C = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.3, 0.2, 0.5]]) * 0.1
    cov = C @ C.T
    y = clean + rng.standard_normal(clean.shape) @ C.T
    rec = Recording(t, clean + 1e-4 * rng.standard_normal(clean.shape), y)
    avg = average_periods(rec, period)
    assert avg.n_periods == 40 and avg.recording.n_samples == 200
    np.testing.assert_allclose(avg.output_covariance, cov, atol=0.1 * cov.max())
    np.testing.assert_allclose(avg.recording.output_covariance, avg.output_covariance / 40)
    assert np.abs(avg.recording.output - clean[200:400]).max() < 6 * 0.1 / np.sqrt(40)
    np.testing.assert_allclose(np.diag(avg.position_covariance), 1e-8, rtol=0.1)


def test_decimated_output_covariance_is_that_of_one_filtered_sample():
    """Decimation filters the output noise: one sample of the decimated system has the
    averaged output's covariance times Σ h², and Gauss–Markov weighs with that."""
    robot = random_robot(2, seed=1, friction=True)
    rng = np.random.default_rng(3)
    rate, period = 100.0, 2.0
    t = np.arange(int(20 * period * rate)) / rate
    q = np.column_stack([np.sin(np.pi * t), np.cos(2 * np.pi * t)])
    rec = Recording(t, q, q + 0.1 * rng.standard_normal(q.shape))
    known = average_periods(rec, period).recording.output_covariance
    plain = IdentificationData(robot, rec, processing=Processing(period=period))
    np.testing.assert_allclose(plain.output_covariance, known, rtol=1e-12)
    data = IdentificationData(robot, rec, processing=Processing(period=period, decimate=4))
    h = scipy.signal.firwin(65, 0.25)  # 16 D + 1 taps, cutoff at the new Nyquist frequency
    np.testing.assert_allclose(data.output_covariance, known * np.sum(h**2), rtol=1e-12)
    gm = GaussMarkov(covariance="recordings").fit(data)
    np.testing.assert_allclose(gm.noise_covariance_, known * np.sum(h**2), rtol=1e-12)


def test_period_errors_are_reported():
    t = np.arange(1000) / 100.0
    q = np.sin(2 * np.pi * t / 2.5)[:, None]
    rec = Recording(t, q, q)
    with pytest.raises(dynid.DataError, match="must be a whole number of samples"):
        average_periods(rec, 2.505)
    with pytest.raises(dynid.DataError, match=r"does not repeat every 2\.6 s"):
        average_periods(rec, 2.6)
    with pytest.raises(dynid.DataError, match="record at least two periods more"):
        average_periods(rec, 5.0)


def test_decimation_filters_regressor_and_output_alike():
    """Chunked parallel decimation equals filtering the whole regressor at once."""
    robot = random_robot(2, seed=1, friction=True)
    rng = np.random.default_rng(2)
    N = 700
    t = np.arange(N) * 0.002
    q = np.column_stack([np.sin(2 * t), np.cos(3 * t)])
    v, a = np.gradient(q, t, axis=0), np.gradient(np.gradient(q, t, axis=0), t, axis=0)
    y = rng.standard_normal((N, 2))
    rec = Recording(t, q, y, velocities=v, accelerations=a)
    data = IdentificationData(robot, rec, processing=Processing(decimate=5), chunk_size=60)
    chunks = list(data.rows())
    Yd = np.concatenate([c[0] for c in chunks])
    yd = np.concatenate([c[1] for c in chunks])
    Y = data.base.regressor(data.regressor(q, v, a))
    h = decimation_filter(5)
    L = (len(h) - 1) // 2
    want_Y = np.stack([np.tensordot(h, Y[c - L:c + L + 1], axes=(0, 0))
                       for c in range(L, N - L, 5)])
    want_y = np.stack([h @ y[c - L:c + L + 1] for c in range(L, N - L, 5)])
    # Filtering in chunks and at once sum the same products in their own orders: they agree
    # to the rounding of such sums (relative to the sum of |products|, as outputs may cancel).
    for got, want, x in ((Yd, want_Y, Y), (yd, want_y, y), (decimate(y, 5)[1], want_y, y)):
        size = np.stack([np.tensordot(np.abs(h), np.abs(x[c - L:c + L + 1]), axes=(0, 0))
                         for c in range(L, N - L, 5)])
        assert got.shape == want.shape and np.all(np.abs(got - want)
                                                  <= sum_rounding(size, len(h)))
    assert len(chunks) > 3
    # The filter passes slow signals unchanged and stops above its cutoff.
    _, H = scipy.signal.freqz(h, worN=[0.05 * np.pi, 0.3 * np.pi])
    assert abs(abs(H[0]) - 1) < 1e-3 and abs(H[1]) < 1e-3


def test_actuator_side_recordings_are_mapped_to_the_basis():
    robot = random_robot(3, seed=4, motors=True, output="current")
    t = np.arange(300) * 0.01
    q = np.column_stack([np.sin(t), np.cos(2 * t), 0.3 * t])
    v, a = np.gradient(q, t, axis=0), np.gradient(np.gradient(q, t, axis=0), t, axis=0)
    q_m, v_m, a_m, _ = robot.transmission.actuator_state(q, v, a)
    rec = Recording(t, q_m, np.zeros_like(q), velocities=v_m, accelerations=a_m,
                    space="actuator", output_kind="current", names=robot.actuator_names)
    with pytest.raises(dynid.DataError, match="pass the robot"):
        Processing().apply(rec)
    out = Processing().apply(rec, robot)
    assert out.space == "basis" and out.names == robot.joint_names
    np.testing.assert_allclose(out.positions, q, atol=1e-12)
    np.testing.assert_allclose(out.accelerations, a, atol=1e-9)


def test_units_follow_the_robot():
    """Simulated recordings, validations and actuator recordings mapped to the basis carry
    metres and newtons on the prismatic joints, radians and newton-metres elsewhere."""
    robot = random_robot(3, seed=1, prismatic=0.5, friction=True, smoothing=0.1)
    types = robot.tree.joint_types
    assert "prismatic" in types and "revolute" in types
    lengths = tuple("m" if t == "prismatic" else "rad" for t in types)
    forces = tuple("N" if t == "prismatic" else "N·m" for t in types)
    ref = FourierReference.random(robot, harmonics=2, frequency=1.0, seed=0)
    sim = simulate(robot, robot.prior, ref, 0.5, control_rate=200)
    for rec in (sim.measured[0], sim.truth[0]):
        assert rec.units["positions"] == lengths and rec.units["output"] == forces
    check = validate(robot, robot.prior, sim.truth[0])
    assert check.units == forces
    assert [line.split()[2] for line in check.summary().splitlines()[1:4]] == list(forces)
    with pytest.raises(dynid.DataError, match=r"joint1 is in m, but joint joint1 is "
                                              r"revolute \(an angle\) \(rad\)"):
        IdentificationData(robot, sim.truth[0].with_signals(
            units={**sim.truth[0].units, "positions": ("m", "rad", "rad")}))
    motors = random_robot(3, seed=1, prismatic=0.5, motors=True, output="current")
    t = np.arange(50) * 0.01
    q = np.column_stack([np.sin(t), 0.1 * np.cos(2 * t), 0.1 * t])
    q_m = motors.transmission.actuator_state(q, q, q)[0]
    rec = Recording(t, q_m, np.zeros_like(q), space="actuator", output_kind="current",
                    names=motors.actuator_names)
    assert Processing().apply(rec, motors).units["positions"] == lengths


def test_processing_settings_are_checked():
    with pytest.raises(dynid.DataError, match="harmonics_cutoff needs the excitation period"):
        Processing(harmonics_cutoff=2.0)
    with pytest.raises(dynid.DataError, match=r"decimate: expected an integer between 1 and"):
        Processing(decimate=0)
    with pytest.raises(dynid.DataError, match=r"processing settings: unknown keys \['cutof'\]"):
        Processing.from_dict({"cutof": 3})
    t = np.cumsum(np.r_[0.0, np.random.default_rng(0).uniform(0.5, 1.5, 99)]) * 0.01
    rec = Recording(t, np.sin(t)[:, None], np.sin(t)[:, None])
    with pytest.raises(dynid.DataError, match="filtering needs uniformly sampled data"):
        Processing(cutoff=5.0).apply(rec)
    robot = random_robot(2, seed=1)
    t = np.arange(400) / 100.0
    q = np.column_stack([np.sin(t), np.cos(t)])
    with pytest.raises(dynid.DataError, match="cutoff: expected a frequency between 0 and the "
                                              "Nyquist frequency 50 Hz, found 80 Hz"):
        Processing(cutoff=80.0, decimate=1).apply(Recording(t, q, q))
    for settings, match in (
            ({"order": 0}, r"order: expected an integer between 1 and 20 .*found 0"),
            ({"order": 2.5}, r"order: expected an integer between 1 and 20"),
            ({"cutoff": float("nan")}, r"cutoff: expected a frequency > 0 Hz or None, found nan"),
            ({"cutoff": -3.0}, r"cutoff: expected a frequency > 0 Hz or None, found -3.0"),
            ({"cutoff": "fast"}, r"cutoff: expected a frequency in Hz, 'auto' or None, found "
                                 r"'fast'"),
            ({"output_cutoff": float("inf")}, r"output_cutoff: expected a frequency > 0 Hz"),
            ({"decimate": 10**30}, r"decimate: expected an integer between 1 and 10000"),
            ({"decimate": True}, r"decimate: expected an integer"),
            ({"skip": -1}, r"skip: expected an integer ≥ 0"),
            ({"period": 0.0}, r"period: expected a duration > 0 s or None, found 0.0"),
            ({"derivatives": "x" * 500}, r"derivatives: expected one of 'auto', 'positions', "
                                         r"'velocities', 'recorded', found 'x{20,80}…")):
        with pytest.raises(dynid.DataError, match=match):
            Processing(**settings)
    assert robot.n == 2


def _noisy_sines(rate=200.0, N=4000, noise=1e-4, seed=0):
    """Two joints swinging at 0.5 and 2 Hz, positions with white noise, outputs from a
    random robot with noise."""
    robot = random_robot(2, seed=1, friction=True, smoothing=0.2)
    rng = np.random.default_rng(seed)
    t = np.arange(N) / rate
    q = np.column_stack([0.7 * np.sin(2 * np.pi * 0.5 * t), 0.4 * np.sin(2 * np.pi * 2 * t)])
    v = np.gradient(q, t, axis=0)
    a = np.gradient(v, t, axis=0)
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    return robot, Recording(t, q + noise * rng.standard_normal(q.shape),
                            y + 0.01 * rng.standard_normal(y.shape))


def test_signal_bandwidth_finds_where_the_spectrum_meets_its_floor():
    """Sines: their highest line (2 Hz) and the window's leakage of it. A motion with a falling
    spectrum (noise through a 4th-order low-pass at 2 Hz): the bandwidth rises as the position
    noise falls. White noise alone has none; a clean, smooth motion has no floor (Nyquist)."""
    from dynid.identify.processing import signal_bandwidth

    rate = 200.0
    band = signal_bandwidth(_noisy_sines(noise=1e-4)[1].positions, rate)
    assert 2.0 <= band.max() < 3.5
    rng = np.random.default_rng(1)
    motion = scipy.signal.lfilter(*scipy.signal.butter(4, 2.0, fs=rate),
                                  rng.standard_normal((8000, 2)), axis=0)
    bands = [signal_bandwidth(motion + s * rng.standard_normal(motion.shape), rate).max()
             for s in (1e-3, 1e-5, 1e-7)]
    assert 2.0 < bands[0] < bands[1] < bands[2] < 0.8 * rate / 2
    white = rng.standard_normal((4000, 2))
    np.testing.assert_array_equal(signal_bandwidth(white, rate), 0.0)
    t = np.arange(4000) / rate
    smooth = np.column_stack([np.exp(-((t - 10) / 3) ** 2)] * 2)
    assert np.all(signal_bandwidth(smooth, rate) == pytest.approx(rate / 2, rel=0.01))


def test_automatic_processing_chooses_the_whitest_residual():
    """Candidates keeping ½, ¾, 1 and 1.5 times the positions' bandwidth (those below 80 % of
    Nyquist), each with a cutoff four times the band it keeps (at most 80 % of Nyquist) and
    decimated by ⌊2 rate / cutoff⌋ (at most N / 116, which keeps 100 samples after the
    filter), or at 1, 1.5, 2 and 3 times it with a given decimation; identification keeps
    the lowest score, records them
    all in the result, and validation processes with the chosen numbers."""
    from dynid.identify.processing import signal_bandwidth

    robot, rec = _noisy_sines()
    band = signal_bandwidth(rec.positions, rec.rate).max()
    options = Processing().candidates(rec)
    cutoffs = [c.cutoff for c in options]
    want = [min(2 * m * band, 0.8 * 100.0) for m in (1, 1.5, 2, 3) if m * band < 0.8 * 100.0]
    np.testing.assert_allclose(cutoffs, want, rtol=5e-3)  # three significant digits
    assert [c.decimate for c in options] == [min(int(200.0 // (c / 2)), 4000 // 116)
                                             for c in cutoffs]
    assert Processing().resolve(rec) == options[1]
    # A given decimation: the cutoff limits the band itself, at 1, 1.5, 2 and 3 times it.
    given = [c.cutoff for c in Processing(decimate=10).candidates(rec)]
    np.testing.assert_allclose(given, [m * band for m in (1, 1.5, 2, 3)], rtol=5e-3)
    data = IdentificationData(robot, rec)
    scores = [c.score for c in data.candidates]
    # The lowest score, or among scores within 0.02 or 20 % of it, the 3 multiple's.
    low = min(scores)
    ties = [k for k, c in enumerate(scores) if c <= low + max(0.02, 0.2 * low)]
    chosen = data.candidates[min(ties, key=lambda k: abs(k - 1))].processing
    # The model filter is decided after the candidates (none here: the output has a floor).
    assert data.processing.model_cutoff is None
    assert replace(data.processing, model_cutoff="auto") == chosen
    est = dynid.OLS().fit(data)
    table = est.result_.diagnostics["processing_candidates"]
    assert [row["cutoff"] for row in table] == cutoffs
    assert est.result_.processing == data.processing and data.processing.resolved
    excluded = data.processing.outcome.excluded
    assert len(excluded.thresholds) == 2 and excluded.rest_duration == 0.1
    # Given settings are kept; recorded derivatives are used as recorded.
    assert Processing(cutoff=7.0).candidates(rec) == [  # ⌊400 / 7⌋ = 57, at most N / 116
        Processing(cutoff=7.0, decimate=4000 // 116)]
    exact = rec.with_signals(velocities=rec.positions, accelerations=rec.positions)
    assert Processing().candidates(exact) == [Processing(cutoff=None, decimate=1)]


def test_automatic_decimation_leaves_every_recording_enough_samples():
    """A short recording cannot take the decimation its cutoff calls for: it is limited so
    100 samples remain, with a warning that says what the output keeps."""
    robot, rec = _noisy_sines(N=1200, noise=1e-2)
    with pytest.warns(dynid.DynidWarning, match=r"calls for decimating by \d+, which leaves "
                                                  r"fewer than 100 samples"):
        data = IdentificationData(robot, rec, processing=Processing(cutoff=1.0))
    assert data.processing.decimate == 1200 // (16 + 100)


def test_degenerate_data_get_clear_errors():
    robot, rec = _noisy_sines()
    zero = rec.with_signals(output=rec.output * [1.0, 0.0])
    with pytest.raises(dynid.DataError, match=r"the output of joint2 is 0 in all 4000 samples; "
                                              r"a measured output varies"):
        IdentificationData(robot, zero)
    still = rec.with_signals(positions=np.zeros_like(rec.positions))
    with pytest.raises(dynid.DataError, match="the positions never change in 4000 samples; "
                                              "the robot did not move"):
        IdentificationData(robot, still)
    one = rec.with_signals(positions=rec.positions * [1.0, 0.0] + [0.0, 0.3])
    with pytest.warns(dynid.DynidWarning, match=r"joint2 never move\(s\)"):
        data = IdentificationData(robot, one, processing=Processing(cutoff=None, decimate=1))
    with pytest.raises(dynid.SolverError, match=r"do not determine every unknown .*the least "
                                                r"determined base parameters: .*joint2"):
        dynid.OLS().fit(data)


@pytest.mark.parametrize(("order", "cutoff", "rate"), [(4, 10.0, 1000.0), (4, 106.0, 5000.0),
                                                       (2, 30.0, 200.0), (5, 3.0, 200.0)])
def test_zero_phase_filter_reports_its_effective_cutoff_and_order(order, cutoff, rate):
    """Forward and backward, a Butterworth of order n designed at f_c passes |H(f)|²: its
    −3 dB point is where that is 1/√2 (scipy.signal.freqz of the transfer function, found on a
    fine grid), below f_c (where it is ½, −6 dB); the bilinear design's closed form is
    ``tan(π f₃/fs) = tan(π f_c/fs) (√2 − 1)^(1/2n)``. Its order is 2n: well above f₃ (and well
    below Nyquist) the gain falls by 2n × 6.02 dB per octave. A sinusoid at f₃ comes out of
    :func:`lowpass` with amplitude 1/√2."""
    from dynid.identify import zero_phase_response

    f3, n = zero_phase_response(cutoff, order, rate)
    b, a = scipy.signal.butter(order, cutoff, fs=rate)
    f = np.linspace(0.5 * cutoff, cutoff, 20001)
    gain = np.abs(scipy.signal.freqz(b, a, worN=f, fs=rate)[1]) ** 2
    crossing = f[np.argmin(np.abs(gain - 1 / np.sqrt(2)))]
    assert abs(f3 - crossing) <= f[1] - f[0]
    closed = rate / np.pi * np.arctan(np.tan(np.pi * cutoff / rate)
                                      * (np.sqrt(2) - 1) ** (1 / (2 * order)))
    assert f3 == pytest.approx(closed, rel=1e-9) and f3 < cutoff
    assert n == 2 * order
    if 6 * f3 < 0.1 * rate:
        g1, g2 = np.abs(scipy.signal.freqz(b, a, worN=[3 * f3, 6 * f3], fs=rate)[1]) ** 2
        assert 20 * np.log10(g1 / g2) == pytest.approx(n * 20 * np.log10(2), rel=0.03)
    t = np.arange(int(40 * rate / f3)) / rate
    out = lowpass(np.sin(2 * np.pi * f3 * t)[:, None], rate, cutoff, order)[:, 0]
    middle = out[len(t) // 4:-len(t) // 4]
    assert np.abs(middle).max() == pytest.approx(1 / np.sqrt(2), rel=2e-3)


def test_results_record_the_effective_cutoff_and_old_files_still_load(tmp_path):
    """The result's processing entry holds the design cutoff (what ``cutoff`` means), the
    sample rate and the effective −3 dB cutoff and order there; the summary says them. An
    entry edited to disagree is refused; a file written before these entries (and before the
    dead zone: nothing was left out of it) loads, and re-identifying with it leaves nothing
    out."""
    import json

    from dynid.identify import load_result, zero_phase_response

    robot, rec = _noisy_sines()
    data = IdentificationData(robot, rec, processing=Processing(cutoff=5.0, decimate=20))
    result = dynid.OLS().fit(data).result_
    entry = result.to_json()["processing"]
    f3, n = zero_phase_response(5.0, 4, rec.rate)
    assert entry["cutoff"] == 5.0 and entry["rate"] == pytest.approx(rec.rate)
    assert entry["effective_cutoff"] == pytest.approx(f3) and entry["effective_order"] == n == 8
    assert f"−3 dB at {f3:.4g} Hz" in result.processing.summary()
    path = result.save(tmp_path / "new.json")
    assert load_result(path).processing.outcome == result.processing.outcome
    stored = json.loads(path.read_text())
    stored["processing"]["effective_cutoff"] = 5.0
    (tmp_path / "edited.json").write_text(json.dumps(stored))
    with pytest.raises(dynid.DataError, match=r"processing: effective_cutoff is 5\.0, but an "
                                              r"order-4 Butterworth at 5\.0 Hz .* has 4\.4"):
        load_result(tmp_path / "edited.json")
    for key in ("rate", "effective_cutoff", "effective_order", "excluded", "deadzone", "rest"):
        stored["processing"].pop(key)
    (tmp_path / "old.json").write_text(json.dumps(stored))
    old = load_result(tmp_path / "old.json").processing
    assert old.outcome is None and old.deadzone is None and old.cutoff == 5.0
    again = IdentificationData(robot, rec, processing=old)
    assert again.processing.outcome.excluded is None
    assert again.system().rows.tolist() == [again.system().n_samples] * 2


def test_malformed_processing_entries_are_refused():
    """Every entry of a saved processing is checked as it is read back."""
    from dynid.identify import zero_phase_response

    f3, n = zero_phase_response(5.0, 4, 200.0)
    good = {"cutoff": 5.0, "decimate": 20, "deadzone": [0.1, 0.2], "rest": 0.1, "rate": 200.0,
            "effective_cutoff": f3, "effective_order": n,
            "excluded": {"outputs": ["a", "b"], "thresholds": [0.1, 0.2], "rest_duration": 0.1,
                         "rows": [10, 10], "deadzone": [1, 2], "rest": 3, "rest_seconds": 0.5}}
    assert Processing.from_dict(good).outcome.excluded.kept.tolist() == [6, 5]
    for change, match in (
            ({"cutoff": 10**400}, r"cutoff: expected a frequency > 0 Hz or None"),
            ({"deadzone": [0.1, "x"]}, r"deadzone\[1\]: expected a speed ≥ 0 .*found 'x'"),
            ({"rest": 10**400}, r"rest: expected a duration > 0 s"),
            ({"rate": 10**400}, r"processing: rate: expected the sample rate in Hz"),
            ({"effective_order": 4}, r"processing: effective_order is 4, but an order-4 "
                                     r"Butterworth at 5\.0 Hz .* has 8"),
            ({"effective_cutoff": 10**400}, r"processing: effective_cutoff is 1000+\.\.\.0+, but"),
            ({"excluded": {**good["excluded"], "rows": [10, -1]}},
             r"excluded: expected outputs, .*-1 is not a whole number ≥ 0"),
            ({"excluded": {**good["excluded"], "thresholds": [0.1]}},
             r"excluded: expected one threshold and count per output \(2\), found 1, 2 and 2"),
            ({"excluded": {**good["excluded"], "rest_seconds": float("inf")}},
             r"excluded: .*inf is not a finite number ≥ 0")):
        with pytest.raises(dynid.DataError, match=match):
            Processing.from_dict({**good, **change})


def test_candidates_whose_decimation_a_short_recording_limits_are_passed_over():
    """At 2 and 3 times the bandwidth an 800-sample recording cannot take the decimation the
    cutoff calls for, so its output would keep content above the filtered positions' cutoff;
    while a candidate decimated as its cutoff calls for exists, one of those is chosen."""
    from dynid.identify.processing import limited_decimation

    robot, rec = _noisy_sines(N=800, noise=1e-3)
    options = Processing().candidates(rec)
    limited = [bool(limited_decimation([rec], p)) for p in options]
    assert limited[0] and not all(limited)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dynid.DynidWarning)
        data = IdentificationData(robot, rec)
    assert not limited_decimation([rec], data.processing)
    assert len(data.candidates) == len(options)  # every candidate scored and reported
    assert not limited_decimation([rec], Processing().resolve(rec))  # so is the fitless choice
