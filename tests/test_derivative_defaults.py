"""The automatic processing of positions that the derivatives study chose: positions
low-passed before they were recorded (no noise floor) are decimated, not filtered again; a
stated encoder resolution moves the cutoff as high as its quantization error allows; the
decimation keeps a quarter of the cutoff, so the kept band holds the quantization noise
alone; drive-estimated velocities get the positions' band; and the default holds on the
KUKA LWR4+ data (positions alone as good as its recorded derivatives)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal
from conftest import DATA, dataset

import dynid
from dynid import datasets
from dynid.hardware import FourierReference
from dynid.identify import (
    OLS,
    IdentificationData,
    Processing,
    Recording,
    resolution_from_increments,
    rolloff_bandwidth,
    validate,
)
from dynid.identify.filters import has_floor
from dynid.identify.quantization import EIV_RATIO


def test_rolloff_bandwidth_against_the_analytic_spectrum():
    """White noise through a 6th-order Butterworth at 3 Hz, forward and backward (as FloBaRoID
    filtered its positions): the increments' spectrum is ``4 sin²(πf/rate) |H(f)|⁴`` times a
    constant, so where it falls 60 dB below its peak follows from the filter's response. The
    estimate lands within 3 % of it: Welch's estimate scatters by a few tenths of a decade at
    the peak and at the crossing, where the spectrum falls by about two decades per Hz. Such
    a signal has no noise floor; with white noise added it has one."""
    rate, N = 200.0, 40_000
    sos = scipy.signal.butter(6, 3.0, fs=rate, output="sos")
    x = scipy.signal.sosfiltfilt(sos, np.random.default_rng(3).standard_normal((N, 2)), axis=0)
    f = np.linspace(0.01, rate / 2, 20_000)
    shape = 4 * np.sin(np.pi * f / rate) ** 2 * np.abs(
        scipy.signal.sosfreqz(sos, worN=f, fs=rate)[1]) ** 4
    expected = f[np.flatnonzero(shape > 1e-6 * shape.max())[-1]]
    band = rolloff_bandwidth(x, rate)
    print(f"rolloff {band} Hz, analytic {expected:.3f} Hz")
    np.testing.assert_allclose(band, expected, rtol=0.03)
    assert not has_floor(x, rate).any()
    noisy = x + 1e-3 * np.random.default_rng(4).standard_normal(x.shape)
    assert has_floor(noisy, rate).all()
    with pytest.raises(dynid.DataError, match=r"depth: expected a power ratio between 0 and 1 "
                                              r"\(1e-6 is 60 dB\), found 2"):
        rolloff_bandwidth(x, rate, depth=2)


def _arm_motion(rate: float, duration: float, seed: int = 1):
    robot = dynid.load_robot(DATA / "arm2.yaml")
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.0, seed=seed)
    t = np.arange(0, duration, 1 / rate)
    q, v, a = ref(t)
    return robot, t, q, v, a


def test_positions_without_a_noise_floor_are_decimated_not_filtered():
    """Exact positions of a Fourier motion at 200 Hz and the exact torques: no noise floor,
    so no low-pass of their own, but the regressor and the output are decimated alike (the
    model stays exact under the common filter), and the parameters come back to the
    accuracy of the central differences."""
    robot, t, q, v, a = _arm_motion(200.0, 30.0)
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    rec = Recording(t, q, y, names=robot.joint_names)
    options = Processing().candidates(rec)
    assert all(p.cutoff is None for p in options)
    assert all(p.decimate > 1 for p in options)
    assert [p.decimate for p in options] == sorted({p.decimate for p in options}, reverse=True)
    data = IdentificationData(robot, rec, processing=Processing(deadzone=None))
    assert data.processing.cutoff is None and data.processing.decimate > 1
    base = data.base
    with warnings.catch_warnings():  # the residual of exact data is rounding, not noise
        warnings.simplefilter("ignore", dynid.DynidWarning)
        est = OLS().fit(data)
    truth = base.matrix @ robot.prior
    error = np.linalg.norm(base.matrix @ est.params_ - truth) / np.linalg.norm(truth)
    print(f"decimated by {data.processing.decimate}: relative base-parameter error {error:.2e}")
    assert error < 1e-4
    # Not uniformly sampled: neither filtered nor decimated, with the warning that says so.
    jittered = Recording(t + 1e-3 * np.random.default_rng(1).uniform(size=t.shape), q, y,
                         names=robot.joint_names)
    with pytest.warns(dynid.DynidWarning, match=r"sample intervals vary by more than 5 %"):
        assert Processing().candidates(jittered) == [Processing(cutoff=None, decimate=1)]
    # With a noise floor (white position noise), the usual filtered candidates.
    noisy = rec.with_signals(positions=q + 1e-5 * np.random.default_rng(0).standard_normal(
        q.shape))
    assert all(p.cutoff is not None for p in Processing().candidates(noisy))


def _quantized_arm(counts: int, noise: float, seed: int = 0):
    robot, t, q, v, a = _arm_motion(1000.0, 10.0)
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    y = y + noise * np.random.default_rng(seed).standard_normal(y.shape)
    step = resolution_from_increments(counts)
    return robot, Recording(t, step * np.round(q / step), y, names=robot.joint_names,
                            resolution=step)


def test_a_stated_resolution_raises_the_cutoff_as_far_as_its_quantization_allows():
    """A 2¹⁶-increment joint encoder and 0.05 N·m of torque noise. Without a resolution,
    among residuals equally white the 3 multiple of the bandwidth is kept; with it, the
    quantization's output error is measured for the higher cutoffs as white, and the highest
    where it stays below 0.3 of the residual's σ is kept: the identified result then reports
    that share, and nothing warns."""
    robot, rec = _quantized_arm(2 ** 16, 0.05)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*quantized positions",
                                category=dynid.DynidWarning)
        data = IdentificationData(robot, rec, processing=Processing(deadzone=None))
        result = OLS().fit(data).result_
    blind = IdentificationData(robot, rec.with_signals(resolution=None),
                               processing=Processing(deadzone=None))
    measured = [c for c in data.candidates if c.quantization is not None]
    print([(c.processing.cutoff, round(c.score, 3), c.quantization) for c in data.candidates],
          "without:", blind.processing.cutoff)
    assert all(c.quantization is None for c in blind.candidates)
    assert measured and all(c.processing.cutoff > blind.processing.cutoff for c in measured)
    quiet = [c for c in measured if c.quantization <= EIV_RATIO]
    assert data.processing.cutoff == max(c.processing.cutoff for c in quiet)
    assert max(result.diagnostics["errors_in_variables"]["ratio"]) <= EIV_RATIO
    table = result.diagnostics["processing_candidates"]
    assert [row["quantization"] for row in table] == [c.quantization for c in data.candidates]


def test_quantization_error_grows_with_the_cutoff():
    """The output error of quantized positions, measured through processing and model, grows
    with the cutoff (the accelerations' share of it as the cutoff to the power 5/2), at the
    same decimation."""
    robot, rec = _quantized_arm(2 ** 12, 0.05)
    shares = []
    for cutoff in (3.0, 6.0, 12.0):
        p = Processing(cutoff=cutoff, decimate=40, deadzone=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dynid.DynidWarning)
            result = OLS().fit(IdentificationData(robot, rec, processing=p)).result_
        shares.append(np.array(result.diagnostics["errors_in_variables"]["sigma"]))
    exponents = np.log2(np.array(shares[1:]) / np.array(shares[:-1]))
    print(shares, exponents)
    assert np.all((exponents > 2.0) & (exponents < 3.2))


@pytest.fixture(scope="module")
def kuka():
    root = dataset("kuka_lwr4_flobaroid")
    return datasets.kuka_robot(root), datasets.kuka_recordings(root)


def test_the_default_holds_on_the_kuka_data(kuka):
    """Trained on measurements 2 + 3, validated on 1, OLS: from the positions alone with the
    default processing the validation error is at most 2.3 %, no worse than from the recorded
    derivatives by more than 0.1 point, and within 0.1 point of the recorded derivatives
    decimated alike (the logger low-passed every signal: the positions have no noise floor,
    so they are decimated, not filtered)."""
    robot, recs = kuka
    train = [recs[2], recs[3]]

    def valid(processing):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dynid.DynidWarning)
            data = IdentificationData(robot, train, processing=processing)
            result = OLS().fit(data).result_
            return validate(robot, result, recs[1]).overall_relative_error, data.processing

    positions, chosen = valid(Processing(derivatives="positions"))
    recorded, _ = valid(Processing(derivatives="recorded"))
    alike, _ = valid(Processing(derivatives="recorded", cutoff=None, decimate=chosen.decimate))
    print(f"positions {positions:.3f} % ({chosen.summary()}), recorded {recorded:.3f} %, "
          f"recorded decimated alike {alike:.3f} %")
    assert chosen.cutoff is None and chosen.decimate > 1
    assert positions <= 2.3
    assert positions <= recorded + 0.1
    assert abs(positions - alike) <= 0.1


def _kept_band_noise(rate: float, cutoff: float, factor: int, step: float) -> float:
    """σ (rad/s²) of the accelerations' error that white quantization noise of variance
    ``step² / 12`` leaves after the processing, propagated in the frequency domain: the
    zero-phase Butterworth (power ``|H|⁴``), the fourth-order central difference twice (its
    response ``(8 sin ω − sin 2ω) rate / 6`` each) and the decimation filter of ``factor``
    (``|G|²``): ``σ² = (step² / 12) (1/π) ∫₀^π |H|⁴ d⁴ |G|² dω``."""
    w = np.linspace(0.0, np.pi, 400_001)[1:]
    sos = scipy.signal.butter(4, cutoff, fs=rate, output="sos")
    H2 = np.abs(scipy.signal.sosfreqz(sos, worN=w)[1]) ** 2
    d2 = ((8 * np.sin(w) - np.sin(2 * w)) * rate / 6) ** 2
    taps = scipy.signal.firwin(16 * factor + 1, 1.0 / factor)
    G2 = np.abs(scipy.signal.freqz(taps, worN=w)[1]) ** 2
    return float(np.sqrt(step ** 2 / 12 / np.pi * np.trapezoid(H2 ** 2 * d2 ** 2 * G2, w)))


def test_joint_encoder_at_2khz_the_chosen_band_holds_the_quantization_noise_alone():
    """A 2¹⁸-increment joint encoder at 2 kHz and 0.05 N·m of torque noise. The automatic
    decimation keeps a quarter of the chosen cutoff, where the low-pass leaves the motion
    undistorted: the accelerations' error in the band the regressor keeps (through the
    decimation filter) is the quantization noise alone. The processing is linear, so the
    error splits into what it does to the exact positions (the distortion: below 1 % of the
    noise) and to the quantization error, which is as its propagation through the filter, the
    differences and the decimation filter predicts for white noise of variance ``step² / 12``
    (within 30 %, over the encoder read at eight offsets of its zero: the error of a smooth
    motion is white only approximately in so narrow a band). At the same decimation a 1.5
    times higher cutoff leaves that error as it is (the decimation, not the cutoff, sets it),
    while twice the band multiplies it by about 2^(5/2), as predicted."""
    from dynid.identify._bands import KEPT, MIN_DECIMATED
    from dynid.identify.data import decimate
    from dynid.identify.filters import TAPS_PER_FACTOR

    rate, counts = 2000.0, 2 ** 18
    robot, t, q, v, a = _arm_motion(rate, 20.0)
    step = float(resolution_from_increments(counts)[0])
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    y = y + 0.05 * np.random.default_rng(0).standard_normal(y.shape)
    rec = Recording(t, step * np.round(q / step), y, names=robot.joint_names, resolution=step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dynid.DynidWarning)
        data = IdentificationData(robot, rec, processing=Processing(deadzone=None))
    chosen = data.processing
    assert chosen.decimate == min(int(rate // (2 * KEPT * chosen.cutoff)),
                                  rec.n_samples // (TAPS_PER_FACTOR + MIN_DECIMATED))
    offsets = np.random.default_rng(1).uniform(-0.5, 0.5, 8) * step

    def kept_error(cutoff: float, factor: int, exact: bool = False) -> np.ndarray:
        errors = []
        for offset in offsets[:1] if exact else offsets:
            read = rec.with_signals(positions=q if exact else
                                    step * np.round((q + offset) / step) - offset)
            states = Processing(cutoff=cutoff, decimate=factor).apply(read)
            error = decimate(states.accelerations - a, factor)[1]
            errors.append(error[len(error) // 10: -(len(error) // 10)])
        return np.sqrt(np.mean(np.concatenate(errors) ** 2, axis=0))

    settings = [(chosen.cutoff, chosen.decimate), (1.5 * chosen.cutoff, chosen.decimate),
                (chosen.cutoff, chosen.decimate // 2)]
    measured = [kept_error(c, D) for c, D in settings]
    predicted = [_kept_band_noise(rate, c, D, step) for c, D in settings]
    distortion = kept_error(*settings[0], exact=True)
    assert np.all(distortion < 0.01 * predicted[0])
    for m, p in zip(measured, predicted, strict=True):
        np.testing.assert_allclose(m, p, rtol=0.3)
    np.testing.assert_allclose(measured[1], measured[0], rtol=0.05)
    assert predicted[1] == pytest.approx(predicted[0], rel=0.05)
    assert np.all((measured[2] / measured[0] > 4.0) & (measured[2] / measured[0] < 8.0))
    assert 4.0 < predicted[2] / predicted[0] < 8.0


def test_drive_velocities_get_the_positions_band():
    """Velocities as a drive estimates them (backward differences of its 2¹⁸-increment
    encoder, low-passed by a first-order filter of 1 ms) have a noise floor rising with
    frequency up to the low-pass: measured at the top of the band it hides the motion's top,
    so their own bandwidth is below the positions' (by a factor of about 3 on the simulated
    Panda of ``benchmarks/derivatives.py``). The motion's band is the widest that any of its
    measurements shows: the candidates of the ``"velocities"`` source are the positions',
    and the accelerations derived from the velocities at the cutoff chosen without a fit are
    closer to the truth than at their own band."""
    from scipy.signal import lfilter

    from dynid.identify.filters import signal_bandwidth

    rate, counts, tau = 2000.0, 2 ** 18, 1e-3
    robot, t, q, v, a = _arm_motion(rate, 20.0)
    step = float(resolution_from_increments(counts)[0])
    qq = step * np.round(q / step)
    alpha = (1 / rate) / (tau + 1 / rate)
    drive = lfilter([alpha], [1, alpha - 1], np.diff(qq, axis=0, prepend=qq[:1]) * rate,
                    axis=0)
    y = dynid.Regressor(robot).predict(q, v, a, robot.prior)
    rec = Recording(t, qq, y, velocities=drive, names=robot.joint_names).select(
        slice(200, None))
    own = signal_bandwidth(rec.velocities, rate).max()
    positions = signal_bandwidth(rec.positions, rate).max()
    print(f"bandwidth of the velocities {own:g} Hz, of the positions {positions:g} Hz")
    assert own < positions
    from_velocities = Processing(derivatives="velocities").candidates(rec)
    from_positions = Processing(derivatives="positions").candidates(rec)
    assert [p.cutoff for p in from_velocities] == [p.cutoff for p in from_positions]
    assert [p.decimate for p in from_velocities] == [p.decimate for p in from_positions]

    def acceleration_error(cutoff: float) -> float:
        states = Processing(derivatives="velocities", cutoff=cutoff, decimate=1).apply(rec)
        # The drive's filter delays the velocities by τ + dt/2: compared with the truth then.
        truth = np.array([np.interp(rec.time - tau - 0.5 / rate, t, col) for col in a.T]).T
        inner = slice(rec.n_samples // 10, -(rec.n_samples // 10))
        return float(np.sqrt(np.mean((states.accelerations - truth)[inner] ** 2) /
                             np.mean(truth[inner] ** 2)))

    chosen, narrow = acceleration_error(from_velocities[1].cutoff), acceleration_error(own)
    print(f"relative acceleration error: {chosen:.4f} at {from_velocities[1].cutoff:g} Hz, "
          f"{narrow:.4f} at {own:g} Hz")
    assert chosen < narrow
