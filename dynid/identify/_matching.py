"""How a recording is matched to a robot: its columns by name, its output by kind and unit.

:func:`column_order` matches columns named after a robot's joints (or actuators) to them;
the messages here say what to fix when a recording's output is not what its unit, or the
robot's model, says it is. :func:`check_units` compares the unit of every column with the
robot's coordinate it holds: a prismatic joint (or an actuator that moves one directly) is a
length with a force, a revolute joint an angle with a torque.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from .._files import excerpt
from ..errors import DataError

__all__ = ["check_names", "check_units", "column_order", "default_names", "kind_mismatch",
           "output_mismatch", "robot_units"]


def check_names(names: object, n: int) -> tuple[str, ...]:
    """Validated coordinate names: ``n`` unique strings."""
    if isinstance(names, str) or not isinstance(names, Sequence) or \
            not all(isinstance(x, str) for x in names):
        raise DataError(f"names: expected a list of {n} names (text), one per column, found "
                        f"{excerpt(names)}")
    names = tuple(names)
    if len(names) != n:
        raise DataError(f"names: expected {n} names, one per column, found {len(names)}: "
                        f"{excerpt(names)}")
    repeated = sorted({x for x in names if names.count(x) > 1})
    if repeated:
        where = [j for j, x in enumerate(names) if x == repeated[0]]
        raise DataError(f"names: expected {n} unique names, one per column, found "
                        f"{repeated[0]!r} at columns {where}; each coordinate needs exactly "
                        "one column")
    return names


def default_names(n: int, space: str) -> tuple[str, ...]:
    """The names of a recording's columns when none are given: ``joint1``... (``motor1``...
    in actuator space); such columns are taken in the robot's order."""
    return tuple(f"{'motor' if space == 'actuator' else 'joint'}{j + 1}" for j in range(n))


def column_order(names: Sequence[str], robot, space: str = "basis") -> tuple[int, ...] | None:
    """Match columns named ``names`` to a robot's coordinates.

    In ``space="basis"`` the names are matched to the robot's joints (basis coordinates); in
    ``space="actuator"`` to its actuators, or to its joints (actuator ``j`` drives joint ``j``).
    Names that are none of them (the default names ``joint1``..., column labels such as
    ``q1``) are taken in order.

    Returns
    -------
    The column of each of the robot's coordinates, in the robot's order (a permutation of
    ``range(len(names))``), or ``None`` when the columns are taken in order.

    Raises
    ------
    DataError
        When the names are some of the robot's names but not all of them exactly once
        (unknown names, missing coordinates, repeated names), or when in basis space they name
        the robot's actuators.
    """
    names = check_names(names, len(names) if isinstance(names, Sequence) else 0)
    joints, actuators = tuple(robot.joint_names), tuple(robot.actuator_names)
    if names == default_names(len(names), space):
        return None
    if space == "actuator":
        candidates = ((actuators, "actuators"), (joints, "joints"))
    else:
        candidates = ((joints, "joints"),)
    target = next(((c, kind) for c, kind in candidates if set(names) & set(c)), None)
    if target is None:
        hit = [x for x in names if x in actuators]
        if space == "basis" and hit:
            raise DataError(f"names: {', '.join(hit)} are actuators of robot {robot.name}, but "
                            "the recording holds basis coordinates (space 'basis'); if the "
                            "positions were measured on the motor side pass space='actuator' "
                            "(--space actuator), else name the columns after the joints "
                            f"{', '.join(joints)}")
        return None
    expected, kind = target
    unknown = [x for x in names if x not in expected]
    missing = [x for x in expected if x not in names]
    if unknown or missing:
        parts = []
        for x in unknown:
            close = difflib.get_close_matches(x, expected, n=1)
            parts.append(f"{x!r} is not one of its {kind}" +
                         (f" (did you mean {close[0]!r}?)" if close else ""))
        if missing:
            parts.append(f"no column for {', '.join(missing)}")
        raise DataError(f"names: the columns are named after the {kind} of robot "
                        f"{robot.name} ({', '.join(expected)}), but {'; '.join(parts)}. Name "
                        f"every column after one of its {kind}, each exactly once")
    return tuple(names.index(x) for x in expected)


def output_mismatch(robot, recording) -> str:
    """The message for a recording whose output is not what the robot's model predicts."""
    have, want = recording.output_kind, robot.output
    unit = ", ".join(sorted(set(recording.units["output"])))
    head = (f"recording: the output is {have} (in {unit}), but the model of {robot.name} "
            f"predicts {want}. ")
    if want == "current":
        return head + ("If the output was recorded as a current, give its unit: units="
                       "{'output': 'A'} or 'mA' (--units output=A); without a unit it is "
                       f"taken as a torque in N·m. If it really is {have}, identify "
                       f"robot.with_output({have!r}) (in the robot file: output: {have})")
    fix = f"identify robot.with_output({have!r}) (in the robot file: output: {have})"
    if have == "current" and getattr(robot.transmission, "torque_constants", None) is None:
        fix = ("give every actuator of the robot file its torque_constant and set output: "
               "current (a model of the current needs them)")
    if have == "current":
        return head + (f"If the output is a current, {fix}; if it is a torque, give its unit: "
                       "units={'output': 'N·m'} (--units output=N·m)")
    return head + (f"If the output is {have}, {fix}; if it is {want}, say so: "
                   f"output_kind={want!r} (--output-kind {want})")


def kind_mismatch(kind: str, units: list[str], space: str) -> str:
    """The message for an output unit that is not what ``output_kind`` says."""
    torque = "joint_torque" if space == "basis" else "motor_torque"
    found = ", ".join(units)
    if kind == "current":
        return (f"output: output_kind is 'current', but the output's unit is {found}, a torque "
                "or force. If the output is a current, give its unit: units={'output': 'A'} "
                "or 'mA' (--units output=A); if it is a torque, set output_kind="
                f"{torque!r} (--output-kind {torque})")
    return (f"output: output_kind is {kind!r}, but the output's unit is {found}, a current. "
            "If the output is a current, set output_kind='current' (--output-kind current); if "
            "it is a torque, give its unit: units={'output': 'N·m'} (or mN·m, N; "
            "--units output=N·m)")


def robot_units(robot, space: str, output_kind: str | None = None) -> tuple[tuple[str, ...],
                                                                          tuple[str, ...]]:
    """The SI units of a robot's coordinates in ``space`` and of their efforts of
    ``output_kind`` (joint torque: on the joints; motor torque: on the actuators)."""
    positions = robot.basis_units if space == "basis" else robot.actuator_units
    on = robot.actuator_units if (output_kind or robot.output) == "motor_torque" else \
        robot.basis_units
    from .units import EFFORT

    return positions, tuple(EFFORT[u] for u in on)


def check_units(recording, robot, where: str) -> None:
    """Raise when a column's unit is not what the robot's coordinate it holds measures: an
    angle for a length (or the reverse), a torque for a force (or the reverse)."""
    if recording.n != robot.n:
        return  # the count is reported where the recording meets the robot
    positions, efforts = robot_units(robot, recording.space, recording.output_kind)
    names = robot.joint_names if recording.space == "basis" else robot.actuator_names
    kind = {"m": "a length (prismatic)", "rad": "an angle (revolute)", "N": "a force",
            "N·m": "a torque"}
    checks = [("positions", recording.units["positions"], positions)]
    if recording.output_kind != "current":
        checks.append(("output", recording.units["output"], efforts))
    for signal, found, want in checks:
        bad = [j for j in range(recording.n) if found[j] != want[j]]
        if not bad:
            continue
        j = bad[0]
        raise DataError(
            f"{where}: {signal} column {j} ({recording.names[j]}) is in {found[j]}, "
            f"{kind[found[j]]}, but {names[j]} of robot {robot.name} is {kind[want[j]]} "
            f"({want[j]}); {len(bad)} column(s) differ: "
            f"{', '.join(recording.names[k] for k in bad)}. Give the unit of each column as "
            f"recorded, e.g. units={{{signal!r}: [{', '.join(repr(u) for u in want)}]}} "
            "(or mm, deg, N·mm... for the columns in those units)")
