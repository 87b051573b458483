"""Checks of recordings against a robot, before anything is computed from them: columns,
size, output kind, units; outputs that never change and robots that never move; and the
recordings' pooled output covariance."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ..errors import DataError, DynidWarning
from ..models import Robot
from .recording import Recording

__all__ = ["check_informative", "check_recording", "pooled_covariance"]


def check_recording(robot: Robot, recording: Recording, *, reorder: bool = False
                    ) -> Recording:
    """Raise when a recording does not fit the robot: columns, size, output kind, position
    units. Returns the recording, with its columns in the robot's order.

    Columns named after the robot's joints (or actuators, in actuator space) are matched by
    name (:meth:`Recording.matched`): unknown, missing or repeated names raise. Columns that
    name the robot's coordinates in another order are put in the robot's order when
    ``reorder`` is true, and raise otherwise. Default names (``joint1``...) and labels that
    name none of the robot's coordinates are taken in order.
    """
    from ._matching import output_mismatch

    matched = recording.matched(robot)
    if matched is not recording:
        if not reorder:
            what = "actuators" if recording.space == "actuator" else "joints"
            raise DataError(f"recording: its columns {', '.join(recording.names)} are the "
                            f"{what} of robot {robot.name} in another order (the robot's: "
                            f"{', '.join(matched.names)}); put them in the robot's order with "
                            "recording.matched(robot), or read the file with robot= "
                            "(read_csv, read_npz), which does")
        recording = matched
    if recording.n != robot.n:
        raise DataError(f"recording: {recording.n} coordinates ({', '.join(recording.names)}), "
                        f"but robot {robot.name} has {robot.n} ({', '.join(robot.joint_names)})"
                        "; record every coordinate, or use the robot the recording is from")
    if recording.output_kind != robot.output:
        raise DataError(output_mismatch(robot, recording))
    if recording.space == "basis":
        for j, (unit, want) in enumerate(zip(recording.units["positions"], robot.basis_units,
                                             strict=True)):
            if unit != want:
                kind = "prismatic (a length)" if want == "m" else "revolute (an angle)"
                raise DataError(f"recording: {recording.names[j]} is in {unit}, but joint "
                                f"{robot.joint_names[j]} is {kind} ({want}); give the "
                                "positions' units per column, e.g. units={'positions': "
                                f"[...]}} (--units positions=U1,U2,...)")
    return recording


def check_informative(recordings: Sequence[Recording]) -> None:
    """Raise on recordings that cannot identify anything: an output channel that never
    changes (zero or constant: not recorded, or the wrong column) or a robot that never moves;
    warn about coordinates that never move (what only their motion excites cannot be
    identified)."""
    for k, rec in enumerate(recordings):
        where = f"recording {k + 1} of {len(recordings)}" if len(recordings) > 1 else \
            "recording"
        flat = np.flatnonzero(np.ptp(rec.output, axis=0) == 0)
        if len(flat):
            j = flat[0]
            raise DataError(f"{where}: the output of {rec.names[j]} is {rec.output[0, j]:g} "
                            f"in all {rec.n_samples} samples; a measured output varies, so it "
                            "was not recorded or the wrong column was read. Check the output "
                            "columns (and their units)")
        still = np.ptp(rec.positions, axis=0) == 0
        if still.all():
            raise DataError(f"{where}: the positions never change in {rec.n_samples} samples; "
                            "the robot did not move. Identification needs an exciting "
                            "motion (dynid design)")
        if still.any():
            names = ", ".join(np.array(rec.names)[still])
            warnings.warn(f"{where}: {names} never move(s); the parameters that only their "
                          "motion excites cannot be identified (the estimate reports which, "
                          "or fails as rank deficient)", DynidWarning, stacklevel=3)


def pooled_covariance(recordings: Sequence[Recording]) -> np.ndarray | None:
    """The average of the recordings' output covariances weighted by their samples, or
    ``None`` when one has none."""
    if any(r.output_covariance is None for r in recordings):
        return None
    weights = np.array([r.n_samples for r in recordings], dtype=float)
    return sum(w * r.output_covariance for w, r in zip(weights, recordings, strict=True)) / \
        weights.sum()
