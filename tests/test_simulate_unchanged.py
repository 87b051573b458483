"""The batch simulator keeps its numbers.

``tests/data/simulate_unchanged.npz`` holds the outputs of :func:`simulate` computed before
the simulator was made steppable (before it became a loop over :class:`Plant`), for the three
cases of :data:`CASES`: the Ariane arm (current output, hall-sensor encoders, actuator-side
recording, output noise), the Panda (joint torque, basis-side recording) and a random arm with
prismatic joints simulated twice at once with position and output noise, two integration
substeps, a finer encoder and one sample recorded in two. They must not change except on
purpose; regenerate them with ``python tests/test_simulate_unchanged.py`` only after a
deliberate change of the simulated physics or of its random draws.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dynid
from dynid.demo import true_parameters
from dynid.hardware import DriveLoops, FourierReference, SensorNoise, simulate, smooth_coulomb

DATA = Path(__file__).parent / "data" / "simulate_unchanged.npz"
SIGNALS = ("positions", "output", "q", "v", "a", "u")
GAINS = ("inertia", "velocity", "integral", "position", "velocity_filter")


def _ariane():
    robot = smooth_coulomb(dynid.load_robot("ariane"), joint=0.02, motor=100.0)
    ref = FourierReference.random(robot, harmonics=4, frequency=0.5, ramp=0.5, seed=2)
    return robot, ref, dict(duration=2.0, control_rate=200.0, space="actuator", seed=1,
                            noise=SensorNoise(output_std=0.02, output_step=0.001))


def _panda():
    robot = smooth_coulomb(dynid.load_robot("panda"), joint=0.02, motor=2.0)
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, ramp=1.0, seed=3)
    return robot, ref, dict(duration=0.6, control_rate=500.0)


def _noisy():
    robot = smooth_coulomb(dynid.random_robot(3, seed=3, prismatic=0.4, friction=True),
                           joint=0.05)
    ref = FourierReference.random(robot, harmonics=3, frequency=0.5, ramp=0.5, seed=1)
    return robot, ref, dict(duration=1.2, control_rate=500.0, record_every=2, runs=2,
                            space="actuator", seed=5,
                            loops=DriveLoops(substeps=2, encoder_increments=4096),
                            noise=SensorNoise(position_std=1e-5, output_std=0.05,
                                              output_step=0.01))


CASES = {"ariane": _ariane, "panda": _panda, "noisy": _noisy}


def _outputs(case: str) -> dict[str, np.ndarray]:
    robot, ref, options = CASES[case]()
    theta = true_parameters(robot, np.random.default_rng(1))
    duration = options.pop("duration")
    sim = simulate(robot, theta, ref, duration, **options)
    out = {"time": sim.measured[0].time,
           "positions": np.stack([r.positions for r in sim.measured]),
           "output": np.stack([r.output for r in sim.measured]),
           "q": np.stack([r.positions for r in sim.truth]),
           "v": np.stack([r.velocities for r in sim.truth]),
           "a": np.stack([r.accelerations for r in sim.truth]),
           "u": np.stack([r.output for r in sim.truth])}
    out.update({name: getattr(sim.gains, name) for name in GAINS})
    return {f"{case}/{k}": v for k, v in out.items()}


@pytest.mark.parametrize("case", list(CASES))
def test_simulate_gives_the_numbers_it_gave_before_it_was_made_steppable(case):
    stored = np.load(DATA)
    now = _outputs(case)
    assert sorted(now) == sorted(k for k in stored.files if k.startswith(case + "/"))
    for key, value in now.items():
        old = stored[key]
        assert value.shape == old.shape, key
        scale = np.abs(old).max()
        np.testing.assert_allclose(value, old, rtol=1e-12, atol=1e-12 * scale, err_msg=key)


if __name__ == "__main__":
    arrays = {}
    for name in CASES:
        arrays.update(_outputs(name))
    np.savez_compressed(DATA, **arrays)
    print(f"{DATA}: {DATA.stat().st_size / 1e3:.0f} kB")
