"""Measurements without drive loops (dynid.hardware.measure): the true motion is the
reference, the output its inverse dynamics (RNEA through the gears, conftest), the sensors
quantize and add noise; and bad requests."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DATA, reference_output

import dynid
from dynid import DataError
from dynid.hardware import FourierReference, SensorNoise, measure


@pytest.fixture(scope="module")
def arm():
    return dynid.load_robot(DATA / "arm2.yaml")


def test_runs_share_the_motion_and_differ_in_noise(arm):
    ref = FourierReference.random(arm, harmonics=2, frequency=0.5, ramp=0.0, seed=1)
    noise = SensorNoise(position_step=1e-3, position_std=1e-4, output_std=0.01)
    sim = measure(arm, arm.prior, ref, 2.0, rate=100.0, space="actuator", noise=noise, runs=3,
                  seed=5)
    truth = sim.truth[0]
    assert sim.gains is None and len(sim.measured) == 3
    q, v, a = ref(truth.time)
    np.testing.assert_array_equal(truth.positions, q)
    np.testing.assert_allclose(truth.output, reference_output(arm, arm.prior, q, v, a),
                               rtol=1e-10, atol=1e-10)
    q_m = q * np.array([d.ratio for d in arm.transmission.drives])
    for rec in sim.measured:
        assert rec.space == "actuator" and rec.names == arm.actuator_names
        np.testing.assert_allclose(rec.positions / 1e-3, np.round(rec.positions / 1e-3),
                                   atol=1e-9)
        assert np.abs(rec.positions - q_m).max() < 0.5e-3 + 6e-4
        assert 0.005 < np.std(rec.output - truth.output) < 0.02
    assert not np.array_equal(sim.measured[0].output, sim.measured[1].output)


@pytest.mark.parametrize("kwargs, match", [
    ({"space": "motor"}, r"space: expected 'basis' or 'actuator', found 'motor'"),
    ({"rate": 0.0}, r"rate: expected a rate > 0 Hz, found 0\.0; e\.g\. rate=500\.0"),
    ({"runs": 0}, r"runs: expected a whole number ≥ 1, found 0"),
    ({"duration": -1.0}, r"duration: expected seconds > 0, found -1\.0"),
])
def test_bad_requests(arm, kwargs, match):
    ref = FourierReference.random(arm, harmonics=2, frequency=0.5, ramp=0.0, seed=1)
    args = {"duration": 2.0, **kwargs}
    duration = args.pop("duration")
    with pytest.raises(DataError, match=match):
        measure(arm, arm.prior, ref, duration, **args)
