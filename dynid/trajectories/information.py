"""The information an executed trajectory gives about the base parameters.

Used to design a trajectory that completes earlier experiments: pass the
:class:`~dynid.trajectories.criteria.Information` of the earlier trajectories (or of recorded
regressor rows) as ``previous`` to :func:`~dynid.trajectories.design.design_excitation`.
"""

from __future__ import annotations

import numpy as np

from ..models import BaseParameters, Regressor, Robot, base_parameters
from .criteria import Information, noise_whitener
from .fourier import FourierTrajectory
from .spaces import DesignSpace

__all__ = ["trajectory_information"]


def trajectory_information(robot: Robot, trajectory: FourierTrajectory, *, rate: float = 100.0,
                           noise: object = None, base: BaseParameters | None = None
                           ) -> Information:
    """``Σ_k W_kᵀ Σ⁻¹ W_k`` over the executed trajectory sampled at ``rate`` (Hz), accumulated
    as the triangular factor of the whitened base regressor, chunk by chunk.

    Parameters
    ----------
    robot, trajectory
        The robot and a trajectory of it (any design space).
    rate
        Sample rate of the recording (Hz).
    noise
        Output noise standard deviations (n,) or covariance (n, n); default unit variance.
    base
        Base parameters (default: ``base_parameters(robot)``).
    """
    space = DesignSpace(robot, trajectory.space, trajectory.unit)
    reg = Regressor(robot)
    base = base or base_parameters(reg)
    whitener = noise_whitener(noise, robot.n)
    samples = trajectory.sample(rate)
    q, v, a = space.basis_state(samples.q, samples.v, samples.a)
    info = None
    for _, Y in reg.chunks(q, v, a):            # compressed chunk by chunk: R of [R; W]
        W = base.regressor(Y)
        if whitener is not None:
            W = np.matmul(whitener, W)
        chunk = Information.from_regressor(W)
        info = chunk if info is None else info + chunk
    return info
