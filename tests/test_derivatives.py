"""Velocities and accelerations from positions: the Butterworth with central differences, the
Savitzky–Golay filter and the Rauch–Tung–Striebel smoother, against the analytic derivatives of
a sum of sines (exact and quantized positions), against their own closed forms (the gain at the
cutoff, the smoother as a least-squares problem, its covariance on data from its own model),
and their bad settings."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.signal import savgol_coeffs

import dynid
from dynid.identify import (
    Processing,
    Recording,
    butterworth_states,
    estimate_states,
    rts_covariance,
    rts_states,
    savgol_states,
    savgol_window,
)
from dynid.identify.rts import MIN_RTS_RATIO
from dynid.identify.states import derive_states

RATE = 1000.0
# Two coordinates, each a sum of two sines: frequencies (Hz) and amplitudes (rad).
FREQS = np.array([[0.5, 2.0], [0.3, 1.5]])
AMPS = np.array([[0.8, 0.3], [0.5, 0.2]])
METHODS = ("butterworth", "savgol", "rts")


def _sines(duration: float = 20.0, rate: float = RATE):
    """Time (N,), and the positions, velocities and accelerations (N, 2) of the sums of
    sines."""
    t = np.arange(0, duration, 1 / rate)
    w = 2 * np.pi * FREQS
    phase = w[None] * t[:, None, None]
    q = (AMPS * np.sin(phase)).sum(axis=2)
    v = (AMPS * w * np.cos(phase)).sum(axis=2)
    a = -(AMPS * w ** 2 * np.sin(phase)).sum(axis=2)
    return t, q, v, a


def _quantize(q: np.ndarray, counts: int) -> np.ndarray:
    step = 2 * np.pi / counts
    return step * np.round(q / step)


def _rms(x: np.ndarray, inner: bool = True) -> np.ndarray:
    """RMS per column, over the inner 80 % of the samples (no ends) or all of them."""
    if inner:
        x = x[len(x) // 10: -(len(x) // 10)]
    return np.sqrt(np.mean(x ** 2, axis=0))


def _noise_gain(method: str, cutoff: float, N: int, seed: int = 7) -> np.ndarray:
    """RMS (3, 1) of what the estimator makes of unit white noise (inner samples): the
    estimators are linear, so white position noise of σ adds σ times this to q, v and a."""
    e = np.random.default_rng(seed).standard_normal((N, 1))
    return np.array([_rms(x) for x in estimate_states(e, RATE, cutoff, method)])


def _savgol_bias(cutoff: float) -> np.ndarray:
    """RMS error (2, 2) of the Savitzky–Golay velocities and accelerations of the sums of sines
    (rows: v, a; columns: coordinates), from the frequency response of its coefficients
    (``scipy.signal.savgol_coeffs``, each derivative over its window): a sine of frequency f
    comes out of the derivative filter of order d times ``Σ c_k e^{iωk dt}`` instead of
    ``(iω)^d``."""
    out = np.zeros((2, 2))
    for d in (1, 2):
        window = savgol_window(RATE, cutoff, 3, d)
        k = np.arange(window) - window // 2
        c = savgol_coeffs(window, 3, deriv=d, delta=1 / RATE, use="dot")
        w = 2 * np.pi * FREQS
        response = np.exp(1j * np.multiply.outer(w / RATE, k)) @ c
        err = AMPS * np.abs(response - (1j * w) ** d)
        out[d - 1] = np.sqrt((err ** 2 / 2).sum(axis=1))
    return out


def test_exact_positions_each_estimator_against_the_analytic_derivatives():
    """Without noise, a filter errs only by its response at the motion's frequencies (≤ 2 Hz
    against a 6 Hz cutoff): the Butterworth and the smoother both pass ``1/(1 + (f/6)⁸)`` of it,
    at most 1.5e-4 short; the Savitzky–Golay error is what its coefficients' frequency
    response predicts."""
    _, q, v, a = _sines()
    scale = np.array([_rms(v), _rms(a)])
    bound = 1 / (1 + (FREQS.max() / 6.0) ** -8)  # the largest shortfall of 1/(1+(f/fc)^8)
    for method in METHODS:
        _, v_e, a_e = estimate_states(q, RATE, 6.0, method)
        err = np.array([_rms(v_e - v), _rms(a_e - a)])
        print(f"{method}: relative RMS error of v {err[0] / scale[0]}, of a "
              f"{err[1] / scale[1]}")
        if method == "savgol":
            predicted = _savgol_bias(6.0)
            np.testing.assert_allclose(err, predicted, rtol=0.02)
        else:
            assert np.all(err <= 2 * bound * scale)


@pytest.mark.parametrize("counts", [4096, 2 ** 18])
def test_quantized_positions_each_estimator_within_its_noise(counts):
    """Positions from an encoder of ``counts`` increments a turn: each estimator's error is
    its error on exact positions plus what it makes of the quantization noise, white of
    variance ``step² / 12`` (the motion crosses several increments a sample): within that
    error plus twice that noise (the estimators are linear). The Butterworth and the
    smoother, whose responses are alike, make the same of that noise."""
    t, q, v, a = _sines()
    y = _quantize(q, counts)
    sigma = 2 * np.pi / counts / np.sqrt(12)
    gains = {method: _noise_gain(method, 6.0, len(t)) for method in METHODS}
    for method in METHODS:
        _, v_0, a_0 = estimate_states(q, RATE, 6.0, method)
        _, v_e, a_e = estimate_states(y, RATE, 6.0, method)
        for x0, x, truth, d in ((v_0, v_e, v, 1), (a_0, a_e, a, 2)):
            bias, err = _rms(x0 - truth), _rms(x - truth)
            noise = sigma * gains[method][d]
            print(f"{counts} {method} d{d}: error {err}, bias {bias}, noise {noise}")
            assert np.all(err <= bias + 2 * noise)
    np.testing.assert_allclose(gains["butterworth"], gains["rts"], rtol=0.1)


def test_smoother_beats_butterworth_at_the_ends_of_quantized_positions():
    """On quantized positions (4096 a turn) both filter alike in the middle of the record, but
    the Butterworth's ends carry its padding's error while the smoother's carry the model's
    estimate: over the whole record its velocity and acceleration errors are less than half
    the Butterworth's."""
    _, q, v, a = _sines()
    y = _quantize(q, 4096)
    _, v_b, a_b = butterworth_states(y, RATE, 6.0)
    _, v_r, a_r = rts_states(y, RATE, 6.0)
    for x_b, x_r, truth in ((v_b, v_r, v), (a_b, a_r, a)):
        whole_b, whole_r = _rms(x_b - truth, inner=False), _rms(x_r - truth, inner=False)
        print(f"whole record: Butterworth {whole_b}, smoother {whole_r}")
        assert np.all(whole_r < 0.5 * whole_b)
        np.testing.assert_allclose(_rms(x_r - truth), _rms(x_b - truth), rtol=0.1)


def _jerk_data(rate: float, cutoff: float, counts: int, N: int, seed: int):
    """A motion drawn from the smoother's own model (jerk a random walk whose white
    derivative has density ``S = r dt (2π cutoff)⁸``, ``r = step²/12``), exact by Van Loan's
    method (``scipy.linalg.expm``), and its positions quantized to ``counts`` a turn."""
    dt = 1 / rate
    step = 2 * np.pi / counts
    S = step ** 2 / 12 * dt * (2 * np.pi * cutoff) ** 8
    A = np.diag(np.ones(3), 1)
    M = np.zeros((8, 8))
    M[:4, :4], M[:4, 4:], M[4:, 4:] = -A, np.diag([0, 0, 0, S]), A.T
    E = expm(M * dt)
    F = E[4:, 4:].T
    Q = F @ E[:4, 4:]
    rng = np.random.default_rng(seed)
    w = rng.multivariate_normal(np.zeros(4), 0.5 * (Q + Q.T), size=N)
    x = np.zeros((N, 4))
    for k in range(1, N):
        x[k] = F @ x[k - 1] + w[k]
    return x, _quantize(x[:, :1], counts), step


def test_smoother_on_its_own_model_is_optimal_and_knows_its_error():
    """Where its assumptions hold (the motion from its model, quantization noise): the
    smoother's errors have the variance its covariance states (Riccati and Lyapunov solved by
    scipy), and no Butterworth cutoff does better, in the middle or over the whole record."""
    rate, cutoff, N = 1000.0, 8.0, 8000
    x, y, step = _jerk_data(rate, cutoff, 2 ** 14, N, seed=3)
    print(f"increments a sample (median) {np.median(np.abs(np.diff(y[:, 0]))) / step:.0f}")
    q_r, v_r, a_r = rts_states(y, rate, cutoff)
    cov = rts_covariance(rate, cutoff, resolution=step)[0]
    truth = (x[:, 0], x[:, 1], x[:, 2])
    for d, (est, true) in enumerate(zip((q_r, v_r, a_r), truth, strict=True)):
        ratio = _rms(est[:, 0] - true) ** 2 / cov[d, d]
        print(f"state {d}: error variance / smoother's covariance {ratio:.3f}")
        assert 0.75 < ratio < 1.25
    for c in (5.0, 7.0, 8.0, 9.0, 12.0):
        _, v_b, a_b = butterworth_states(y, rate, c)
        for est, ref, true in ((v_b, v_r, x[:, 1]), (a_b, a_r, x[:, 2])):
            assert _rms(ref[:, 0] - true) <= 1.002 * _rms(est[:, 0] - true)
            assert _rms(ref[:, 0] - true, False) < _rms(est[:, 0] - true, False)


def test_smoother_is_the_least_squares_trajectory():
    """The smoother's estimate is the trajectory that minimizes the measurement errors plus
    the process noise, each weighted by its covariance: the same normal equations solved
    densely, with the model discretized by Van Loan's method."""
    rate, cutoff, N = 100.0, 12.0, 300
    t = np.arange(N) / rate
    y = (np.sin(2 * np.pi * 1.3 * t) + 0.02 * np.random.default_rng(0).standard_normal(N))
    w = 2 * np.pi * cutoff
    # Scaled state z = [q, v/w, a/w², j/w³], unit measurement noise, S = dt w⁸.
    A = w * np.diag(np.ones(3), 1)
    M = np.zeros((8, 8))
    M[:4, :4], M[:4, 4:], M[4:, 4:] = -A, np.diag([0, 0, 0, w ** 2 / rate]), A.T
    E = expm(M / rate)
    F = E[4:, 4:].T
    Qi = np.linalg.inv(F @ E[:4, 4:])
    D = np.zeros((4 * (N - 1), 4 * N))
    for k in range(N - 1):
        D[4 * k:4 * k + 4, 4 * k:4 * k + 4] = -F
        D[4 * k:4 * k + 4, 4 * k + 4:4 * k + 8] = np.eye(4)
    H = np.zeros((N, 4 * N))
    H[np.arange(N), 4 * np.arange(N)] = 1
    W = np.kron(np.eye(N - 1), Qi)
    z = np.linalg.solve(H.T @ H + D.T @ W @ D, H.T @ y).reshape(N, 4)
    q, v, a = rts_states(y[:, None], rate, cutoff)
    np.testing.assert_allclose(q[:, 0], z[:, 0], atol=1e-6)
    np.testing.assert_allclose(v[:, 0], w * z[:, 1], atol=1e-6 * w)
    np.testing.assert_allclose(a[:, 0], w ** 2 * z[:, 2], atol=1e-6 * w ** 2)


@pytest.mark.parametrize("method", METHODS)
def test_half_gain_at_the_cutoff(method):
    """A sine at the cutoff comes out at half its amplitude, and so do its derivatives (the
    Butterworth forward and backward, and the smoother in the middle of the record, exactly;
    the Savitzky–Golay within its windows' whole numbers of samples)."""
    t = np.arange(0, 10, 1 / RATE)
    w = 2 * np.pi * 10.0
    states = estimate_states(np.sin(w * t)[:, None], RATE, 10.0, method)
    for d, x in enumerate(states):
        gain = np.sqrt(2) * _rms(x)[0] / w ** d
        assert gain == pytest.approx(0.5, abs=0.03 if method == "savgol" else 1e-4), d


def test_periodic_one_period():
    """One period of a periodic motion: its ends join, so the smoother and the
    Savitzky–Golay filter err as little at the ends as in the middle."""
    t, q, v, a = _sines(duration=10.0)  # whole periods of every sine
    y = _quantize(q, 2 ** 18)
    for method in ("rts", "savgol"):
        _, v_e, a_e = estimate_states(y, RATE, 6.0, method, periodic=True)
        ends = np.r_[0:200, len(t) - 200:len(t)]
        for x, truth in ((v_e, v), (a_e, a)):
            assert np.all(_rms((x - truth)[ends], False) < 3 * _rms(x - truth) + 1e-9)


def test_processing_chooses_the_estimator():
    """``Processing(differentiation=...)`` applies the estimator to recorded positions;
    ``"auto"`` is the Butterworth with central differences, as before the choice existed."""
    t, q, _, _ = _sines(duration=4.0)
    y = _quantize(q, 4096)
    rec = Recording(t, y, np.ones_like(y) + t[:, None])
    for method in METHODS:
        states = Processing(cutoff=6.0, decimate=1, differentiation=method).apply(rec)
        for got, want in zip((states.positions, states.velocities, states.accelerations),
                             estimate_states(y, RATE, 6.0, method), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    auto = Processing(cutoff=6.0, decimate=1).apply(rec)
    q_f = dynid.identify.lowpass(y, rec.rate, 6.0)
    v_f = dynid.identify.differentiate(q_f, t)
    np.testing.assert_array_equal(auto.velocities, v_f)
    np.testing.assert_array_equal(auto.accelerations, dynid.identify.differentiate(v_f, t))
    # Without a cutoff nothing is smoothed, whatever the estimator.
    raw = derive_states(rec, "positions", None, 4, differentiation="rts")
    np.testing.assert_array_equal(raw[1], dynid.identify.differentiate(y, t))
    text = Processing(cutoff=6.0, differentiation="rts").summary()
    assert "differentiation rts" in text
    assert Processing.from_dict(Processing(differentiation="savgol").to_dict()) == \
        Processing(differentiation="savgol")


def test_bad_settings():
    t, q, _, _ = _sines(duration=2.0)
    with pytest.raises(dynid.DataError, match=r"differentiation: expected one of 'auto', "
                                              r"'butterworth', 'savgol', 'rts', found 'kalman'"):
        Processing(differentiation="kalman")
    with pytest.raises(dynid.DataError, match=r"differentiation: .* found 3"):
        estimate_states(q, RATE, 6.0, 3)
    with pytest.raises(dynid.DataError, match=r"cutoff: expected a frequency between 0 and the "
                                              r"Nyquist frequency 500 Hz, found 600"):
        rts_states(q, RATE, 600.0)
    with pytest.raises(dynid.DataError, match=r"cutoff: 0.2 Hz is less than one cycle"):
        savgol_states(q, RATE, 0.2)
    # A smoother too slow for the rate: its process noise vanishes against the measurement's.
    with pytest.raises(dynid.DataError, match=rf"cutoff: 0.05 Hz at 1000 Hz is below "
                                              rf"{MIN_RTS_RATIO:g} times the rate.*"
                                              r"differentiation='butterworth'"):
        rts_states(np.tile(q, (20, 1)), RATE, 0.05)
    # Savitzky–Golay coefficients that scipy cannot compute accurately for a long window.
    with pytest.raises(dynid.DataError, match=r"polyorder: 5 over a window of \d+ samples "
                                              r"\(cutoff 1 Hz at 1000 Hz\) gives inaccurate"):
        savgol_states(q, RATE, 1.0, polyorder=5)
    with pytest.raises(dynid.DataError, match=r"polyorder: expected an integer from 2 to 10"):
        savgol_states(q, RATE, 6.0, polyorder=1)
    with pytest.raises(dynid.DataError, match=r"cutoff: 0.8 Hz needs a Savitzky–Golay window "
                                              r"of \d+ samples, longer than the recording"):
        savgol_states(q[:1500], RATE, 0.8)
    # A smoother without measurement noise, or with a negative or unknown one.
    with pytest.raises(dynid.DataError, match=r"resolution, position_std: the smoother's "
                                              r"measurement noise is zero"):
        rts_covariance(RATE, 6.0)
    for bad in (0.0, -1e-4, np.nan):
        with pytest.raises(dynid.DataError, match=r"resolution of column 0: expected the "
                                                  r"encoder step"):
            rts_covariance(RATE, 6.0, resolution=bad)
    with pytest.raises(dynid.DataError, match=r"position_std: expected the σ ≥ 0"):
        rts_covariance(RATE, 6.0, position_std=-1e-4)
    with pytest.raises(dynid.DataError, match=r"positions: expected finite values"):
        rts_states(np.where(t[:, None] > 1, np.nan, q), RATE, 6.0)


def test_savgol_window_from_the_cutoff():
    """The window's smoothing response falls to ½ nearer the cutoff than its neighbours'
    (computed here from ``scipy.signal.savgol_coeffs`` on a fine grid)."""
    def half(window):
        c = savgol_coeffs(window, 3)
        f = np.linspace(0, 0.5, 20001)
        k = np.arange(window) - window // 2
        gain = np.cos(2 * np.pi * np.multiply.outer(f, k)) @ c
        return f[np.argmax(gain <= 0.5)] * RATE

    for cutoff in (3.0, 10.0, 40.0):
        w = savgol_window(RATE, cutoff)
        assert w % 2 == 1
        miss = [abs(np.log(half(x) / cutoff)) for x in (w - 2, w, w + 2)]
        assert miss[1] <= min(miss[0], miss[2]) + 1e-3


def test_model_discretization_matches_van_loan():
    """The closed-form constant-jerk model equals Van Loan's discretization."""
    from dynid.identify.rts import _jerk_model

    for h in (0.01, 0.3, 1.5):
        F, Q = _jerk_model(h)
        A = h * np.diag(np.ones(3), 1)
        M = np.zeros((8, 8))
        M[:4, :4], M[:4, 4:], M[4:, 4:] = -A, np.diag([0, 0, 0, h ** 2]), A.T
        E = expm(M)
        np.testing.assert_allclose(F, E[4:, 4:].T, rtol=1e-12)
        np.testing.assert_allclose(Q, F @ E[:4, 4:], rtol=1e-9, atol=1e-14 * h ** 2)


def test_identify_command_takes_the_estimator(tmp_path, capsys):
    """``dynid identify --differentiation rts`` keeps the estimator in the result's
    processing; an unknown one is refused by the parser."""
    from conftest import arm_files

    from dynid.cli import main

    robot_file, _, npz = arm_files(tmp_path)
    out = tmp_path / "result.json"
    assert main(["identify", str(robot_file), str(npz), "-o", str(out), "--derivatives",
                 "positions", "--differentiation", "rts", "--cutoff", "5"]) == 0
    assert dynid.identify.load_result(out).processing.differentiation == "rts"
    with pytest.raises(SystemExit):
        main(["identify", str(robot_file), str(npz), "--differentiation", "kalman"])
    assert "invalid choice: 'kalman'" in capsys.readouterr().err
