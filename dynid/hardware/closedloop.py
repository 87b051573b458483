"""The closed loop of an experiment, simulated again with other parameters.

The closed-loop estimators of :mod:`dynid.identify` (:class:`~dynid.identify.
InstrumentalVariables`, :class:`~dynid.identify.DIDIM`) need what the robot would have done
in the same experiment had its parameters been their estimate: the same reference, the same
drives (gains, loops, feed-forward of the robot's prior model, encoder resolution), no noise.
:class:`ClosedLoop` is that simulator: it holds the experiment's reference and controller, and
given standard parameters it returns the noise-free recording of the simulated run (true basis
positions and the output the drives applied), sampled as the experiment was.

It lives here, with the simulation, so that :mod:`dynid.identify` depends on no simulator: the
estimators take any callable ``params (p,) → recordings``.

Examples
--------
>>> sim = simulate(robot, theta, ref, 6.0, control_rate=250, noise=noise)
>>> loop = ClosedLoop(robot, ref, 6.0, gains=sim.gains, control_rate=250)
>>> est = InstrumentalVariables(simulator=loop).fit(IdentificationData(robot, sim.measured))
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import _validate
from ..errors import DataError
from ..identify.recording import Recording
from ..models import Robot
from .drives import DriveLoops, Gains
from .reference import FourierReference
from .simulate import Reference, SensorNoise, simulate

__all__ = ["ClosedLoop"]


class ClosedLoop:
    """The closed loop of one experiment, as a simulator of its noise-free recording.

    Parameters
    ----------
    robot
        The robot (its prior model is the controller's feed-forward, as in the experiment).
    reference
        The reference the drives tracked (callable ``t → (q, v, a)``, or a trajectory of
        :mod:`dynid.trajectories`).
    duration
        Seconds of the experiment.
    gains
        The drives' gains in the experiment (:attr:`~dynid.hardware.Simulation.gains`, or
        :func:`~dynid.hardware.tune_loops` as the drives were tuned).
    control_rate, record_every, loops
        As in :func:`~dynid.hardware.simulate`: the drives' rate (Hz), one control period
        recorded in ``record_every``, the loops.
    recordings
        Recordings of the experiment (repeats of it): the simulated run is given once for each.
    source
        What the settings came from (e.g. the files), kept in :meth:`settings`.
    quantized
        Whether the simulated drives read their encoders' steps (as in the experiment) or the
        exact positions (default): quantization is measurement noise too, and left in a
        noise-free simulation it is no longer dithered by the noise, so it shifts the
        simulated output from the mean of the measured one and makes it jump with θ.

    Examples
    --------
    >>> loop = ClosedLoop(robot, ref, 6.0, gains=sim.gains, control_rate=250)
    >>> (run,) = loop(robot.prior)     # the experiment with the prior parameters, noise-free
    >>> run.positions, run.output      # true basis positions, applied output (N, n)
    """

    def __init__(self, robot: Robot, reference: Reference | FourierReference, duration: float,
                 *, gains: Gains, control_rate: float = 1000.0, record_every: int = 1,
                 loops: DriveLoops | None = None, quantized: bool = False,
                 recordings: int = 1, source: dict | None = None):
        if not isinstance(gains, Gains):
            raise DataError(f"gains: expected the drives' Gains of the experiment, found "
                            f"{type(gains).__name__}; e.g. ClosedLoop(robot, ref, 6.0, "
                            "gains=simulation.gains)")
        if not (_validate.is_number(duration) and duration > 0):
            raise DataError(f"duration: expected seconds > 0, found {duration!r}")
        self.robot, self.reference, self.duration = robot, reference, float(duration)
        self.gains, self.loops, self.quantized = gains, loops or DriveLoops(), quantized
        # Exact positions: steps far below any motion (2⁻⁴⁰ of a turn).
        self._loops = self.loops if quantized else replace(self.loops,
                                                           encoder_increments=2.0**40)
        self.control_rate, self.record_every = control_rate, record_every
        if isinstance(recordings, bool) or not isinstance(recordings, int) or recordings < 1:
            raise DataError(f"recordings: expected a whole number ≥ 1, found {recordings!r}")
        self.recordings, self.source = recordings, dict(source or {})

    def __call__(self, params: np.ndarray) -> tuple[Recording, ...]:
        """The noise-free recording of the experiment with standard parameters ``params``
        (p,): true basis positions and applied output, one recording (repeated for each
        recording of the experiment)."""
        theta = _validate.vector(params, "params", len(self.robot.parameters))
        run = simulate(self.robot, theta, self.reference, self.duration,
                       control_rate=self.control_rate, record_every=self.record_every,
                       loops=self._loops, noise=SensorNoise(), gains=self.gains).truth[0]
        return (run,) * self.recordings

    def settings(self) -> dict:
        """What the simulator holds, for a result file: the controller's settings."""
        g = self.gains
        return {"simulator": "closed_loop", "duration": self.duration,
                "control_rate": float(self.control_rate), "record_every": int(self.record_every),
                "velocity_gains": np.asarray(g.velocity).tolist(),
                "integral_corners": np.asarray(g.integral).tolist(),
                "position_gains": np.asarray(g.position).tolist(),
                "current_bandwidth": float(self.loops.current_bandwidth),
                "feedforward": bool(self.loops.feedforward), "quantized": self.quantized,
                **self.source}

    def __repr__(self) -> str:
        return (f"ClosedLoop(robot={self.robot.name!r}, duration={self.duration}, "
                f"control_rate={self.control_rate})")
