"""Embedded robots: robot files shipped with dynid, and random robots for tests."""

from __future__ import annotations

from pathlib import Path

from ...errors import ModelError
from ..robot import Robot
from ..robotfile import load_robot_file
from .random import random_inertia, random_robot

__all__ = ["embedded_robots", "load_robot", "random_inertia", "random_robot"]

_HERE = Path(__file__).parent


def embedded_robots() -> tuple[str, ...]:
    """Names of the robots shipped with dynid."""
    return tuple(sorted(p.stem for p in _HERE.glob("*.yaml")))


def load_robot(source: str | Path) -> Robot:
    """Load a robot by embedded name (``"panda"``) or from a robot file path."""
    path = Path(source)
    try:
        is_file = path.suffix in (".yaml", ".yml") or path.is_file()
    except OSError:  # a name the system refuses (too long): load_robot_file says why
        is_file = True
    if is_file:
        return _sourced(load_robot_file(path), str(path.resolve()))
    if str(source) in embedded_robots():
        return _sourced(load_robot_file(_HERE / f"{source}.yaml"), str(source))
    raise ModelError(f"robot {str(source)!r}: not a robot file and not an embedded robot; "
                     f"embedded robots are {list(embedded_robots())}")


def _sourced(robot: Robot, source: str) -> Robot:
    object.__setattr__(robot, "source", source)  # not a model change: no rebuild
    return robot
