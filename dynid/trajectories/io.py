"""Trajectory files: JSON holding the trajectory, every design setting and a summary.

The file format::

    {"format": "dynid-trajectory", "version": 1, "robot": "panda",
     "trajectory": {"space": "basis", "unit": "si", "frequency": 0.1, "harmonics": 6,
                    "ramp": 0.0, "periods": 1,
                    "coordinates": {"joint1": {"offset": 0.1, "mu": [...], "nu": [...]}, ...}},
     "settings": {...every DesignSettings field...},
     "summary": {"score": ..., "condition": {...}, "margin": ..., ...}}

Floats are written with every digit (a load gives back the same trajectory); infinite values,
such as an open side of a Cartesian box, are written as the strings ``"inf"`` and ``"-inf"``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from .._files import read_structured
from ..errors import TrajectoryError
from .design import Design
from .fourier import FourierTrajectory
from .settings import DesignSettings

__all__ = ["TrajectoryFile", "load_trajectory", "read_trajectory_file", "save_trajectory"]

FORMAT, VERSION = "dynid-trajectory", 1


@dataclass(frozen=True)
class TrajectoryFile:
    """What a trajectory file holds."""

    trajectory: FourierTrajectory
    settings: DesignSettings | None
    robot: str | None
    summary: dict | None


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def save_trajectory(path: str | Path, trajectory: FourierTrajectory | Design, *,
                    settings: DesignSettings | None = None, robot: str | None = None,
                    summary: dict | None = None) -> Path:
    """Write a trajectory (or a whole :class:`Design`, with its settings and summary)."""
    if isinstance(trajectory, Design):
        design = trajectory
        trajectory, settings = design.trajectory, settings or design.settings
        robot, summary = robot or design.robot, summary or design.summary()
    data = {"format": FORMAT, "version": VERSION, "robot": robot,
            "trajectory": trajectory.to_dict(),
            "settings": None if settings is None else settings.to_dict(),
            "summary": summary}
    path = Path(path)
    path.write_text(json.dumps(_finite(data), indent=1) + "\n")
    return path


def read_trajectory_file(path: str | Path) -> TrajectoryFile:
    """Read and validate a trajectory file."""
    path = Path(path)
    data = read_structured(path, "trajectory file", "JSON", json.loads, json.JSONDecodeError,
                           TrajectoryError)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TrajectoryError(f"trajectory file {str(path)!r}: expected \"format\": \"{FORMAT}\"; "
                              "this is not a dynid trajectory file")
    if data.get("version") != VERSION:
        raise TrajectoryError(f"trajectory file {str(path)!r}: version {data.get('version')!r} "
                              f"is not supported (expected {VERSION})")
    if not isinstance(data.get("trajectory"), dict):
        found = repr(data["trajectory"]) if "trajectory" in data else "none"
        raise TrajectoryError(f"trajectory file {str(path)!r}: expected a \"trajectory\" entry "
                              f"with the coefficients, found {found}")
    settings = data.get("settings")
    return TrajectoryFile(FourierTrajectory.from_dict(data["trajectory"]),
                          None if settings is None else DesignSettings.from_dict(settings),
                          data.get("robot"), data.get("summary"))


def load_trajectory(path: str | Path) -> FourierTrajectory:
    """The trajectory of a trajectory file."""
    return read_trajectory_file(path).trajectory
