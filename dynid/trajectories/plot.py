"""Plots of a trajectory: position, velocity and acceleration of every coordinate, with limits.

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot, no display), so
they work headless; :func:`plot_trajectory` saves to a file when given a path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..models import Robot
from .fourier import FourierTrajectory
from .spaces import DesignSpace

__all__ = ["plot_trajectory"]


def plot_trajectory(trajectory: FourierTrajectory, robot: Robot | None = None, *,
                    path: str | Path | None = None, samples_per_period: int = 1000) -> Figure:
    """One row per coordinate, columns position, velocity, acceleration, over the executed
    duration; the limits of the trajectory's own space dashed when ``robot`` is given."""
    n = trajectory.n
    t = np.linspace(0.0, trajectory.duration,
                    int(samples_per_period * trajectory.duration / trajectory.period) + 1)
    states = trajectory.evaluate(t)
    if robot is not None:
        space = DesignSpace(robot, trajectory.space, trajectory.unit)
        lim, units = space.limits(), space.units
    else:
        lim, units = None, ("rad" if trajectory.unit == "si" else "inc",) * n
    fig = Figure(figsize=(11, 1.6 * n + 1.0), layout="constrained")
    axes = fig.subplots(n, 3, sharex=True, squeeze=False)
    titles = ("position", "velocity", "acceleration")
    suffix = ("", "/s", "/s²")
    for j, name in enumerate(trajectory.names):
        for k in range(3):
            ax = axes[j, k]
            ax.plot(t, states[k][:, j], lw=1.0)
            if lim is not None:
                if k == 0:
                    bounds = (lim.lower[j], lim.upper[j])
                else:
                    b = (lim.velocity if k == 1 else lim.acceleration)[j]
                    bounds = (-b, b)
                for value in bounds:
                    if np.isfinite(value):
                        ax.axhline(value, color="k", ls="--", lw=0.8)
            ax.set_ylabel(f"{name} [{units[j]}{suffix[k]}]", fontsize=8)
            if j == 0:
                ax.set_title(titles[k])
            ax.grid(True, alpha=0.3)
    for k in range(3):
        axes[-1, k].set_xlabel("time [s]")
    fig.suptitle(f"{trajectory.harmonics} harmonics at {trajectory.frequency:g} Hz, "
                 f"{trajectory.space} space")
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
