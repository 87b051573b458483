"""The information an executed trajectory gives about the base parameters.

Used to design a trajectory that completes earlier experiments: pass the
:class:`~dynid.trajectories.criteria.Information` of the earlier trajectories (or of recorded
regressor rows) as ``previous`` to :func:`~dynid.trajectories.design.design_excitation`.
"""

from __future__ import annotations

import numpy as np

from .._linalg import stack_triangular
from ..models import BaseParameters, Regressor, Robot, base_parameters
from .criteria import Information, noise_whitener
from .fourier import FourierTrajectory
from .sensitivity import base_regressor
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
    b = base.rank
    root = np.zeros((0, b))
    low, high = np.full(b, np.inf), np.full(b, -np.inf)
    for start in range(0, len(q), reg.chunk_size):     # R of [R; W_chunk], chunk by chunk
        sl = slice(start, start + reg.chunk_size)
        W = base_regressor(reg, base.independent, q[sl], v[sl], a[sl], whitener).reshape(-1, b)
        root = stack_triangular(root, W)
        low, high = np.minimum(low, W.min(axis=0)), np.maximum(high, W.max(axis=0))
    return Information(root, low, high, len(q))
