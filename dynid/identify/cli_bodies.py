"""The ``dynid payload`` and ``dynid gains`` commands.

::

    dynid payload result.json loaded.npz --link flange -o payload.json
    dynid gains panda empty.npz loaded.npz --link flange --payload-mass 3.0 -o gains.json

``payload`` identifies the ten inertial parameters of a body fixed to a link of a robot
identified without it (the result file names the robot and the processing). ``gains``
identifies each actuator's torque per ampere from two runs of one trajectory recording
currents, without and with a payload of known mass (and, when known, centre of mass and
inertia). Recordings are read as ``dynid identify`` reads them; the files written are read
back by :func:`~dynid.identify.bodyfiles.load_payload` and
:func:`~dynid.identify.bodyfiles.load_drive_gains`, and shown by ``dynid report --payload
--gains``.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from .._arguments import check_output, number, replacing, whole
from ..errors import DataError
from .cli_recordings import read_recording, recording_options, report_read, trim_per_file

__all__ = ["register"]

_PAYLOAD_EXAMPLES = """\
examples:
  dynid identify panda empty.npz --method wls -o robot.json
  dynid payload robot.json loaded.npz --link flange -o payload.json
  dynid payload robot.json loaded.csv --link link7 --xyz 0 0 0.107 --name gripper \\
      --columns time=t --columns positions=q1,...,q7 --columns output=i1,...,i7
then: dynid report robot.json empty.npz --payload payload.json
"""

_GAINS_EXAMPLES = """\
examples:
  dynid gains panda empty.npz loaded.npz --link flange --payload-mass 3.0 -o gains.json
  dynid gains robot.yaml empty.csv loaded.csv --link flange --payload-mass 2.5 \\
      --com 0 0 0.05 --inertia 0.01 0 0 0.01 0 0.004 --columns time=t ...
then: dynid report result.json run.npz --gains gains.json
"""


def _payload(args: argparse.Namespace) -> None:
    from .cli import _processing
    from .payload import identify_payload
    from .result import load_result_and_robot

    check_output(args.output, "-o", inputs=[args.result, *args.recordings])
    result, robot = load_result_and_robot(args.result, args.robot)
    trims = trim_per_file(args.trim, args.recordings)
    runs = [read_recording(p, args, robot, trims.get(p)) for p in args.recordings]
    payload = identify_payload(robot, result, runs, args.link, xyz=args.xyz, rpy=args.rpy,
                               name=args.name, processing=_processing(args, result.processing),
                               epsilon=args.epsilon, covariance=args.covariance,
                               draws=args.draws, seed=args.seed)
    payload = replace(payload, settings={**payload.settings, "result": str(args.result),
                                         "recordings": [str(p) for p in args.recordings]})
    with replacing(args.output) as tmp:
        payload.save(tmp)
    for path, rec in zip(args.recordings, runs, strict=True):
        report_read(path, rec)
    print(payload.summary())
    print()
    print(payload.uncertainty().table())
    print(f"\nwrote {args.output}")


def _gains(args: argparse.Namespace) -> None:
    from ..models import Body, LinkInertia, load_robot
    from .gains import identify_drive_gains

    robot_file = [args.robot] if Path(args.robot).is_file() else []
    check_output(args.output, "-o", inputs=[args.empty, args.loaded, *robot_file])
    body = Body(args.name, args.link, LinkInertia(args.payload_mass, tuple(args.com),
                                                  tuple(args.inertia)),
                xyz=tuple(args.xyz), rpy=tuple(args.rpy), known=True)
    if args.empty == args.loaded:
        raise DataError(f"{args.loaded}: the same file as the run without the payload; give "
                        "the run with the payload fixed to the robot")
    robot = load_robot(args.robot)
    if args.output_kind is None:
        args.output_kind = "current"
    trims = trim_per_file(args.trim, [args.empty, args.loaded])
    empty = read_recording(args.empty, args, robot, trims.get(args.empty))
    loaded = read_recording(args.loaded, args, robot, trims.get(args.loaded))
    from .cli import _processing

    gains = identify_drive_gains(robot, empty, loaded, body, processing=_processing(args),
                                 trajectory_tolerance=args.trajectory_tolerance)
    gains = replace(gains, settings={**gains.settings, "robot": args.robot,
                                     "empty": str(args.empty), "loaded": str(args.loaded)})
    with replacing(args.output) as tmp:
        gains.save(tmp)
    report_read(args.empty, empty)
    report_read(args.loaded, loaded)
    print(gains.summary())
    print(f"\nwrote {args.output}")


def _pose(group) -> None:
    metres = number(-1e3, 1e3)
    group.add_argument("--xyz", type=metres, nargs=3, default=(0.0, 0.0, 0.0),
                       metavar=("X", "Y", "Z"),
                       help="position of the payload frame in the link's frame, m")
    group.add_argument("--rpy", type=number(-10.0, 10.0), nargs=3, default=(0.0, 0.0, 0.0),
                       metavar=("R", "P", "Y"),
                       help="roll, pitch, yaw of the payload frame in the link's frame, rad")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``payload`` and ``gains`` commands to the ``dynid`` parser."""
    p = sub.add_parser(
        "payload", help="identify the mass, centre of mass and inertia of a payload fixed to "
                        "an identified robot",
        description="Identify the ten inertial parameters of a payload fixed to a link, from "
                    "runs with it and the result of the robot identified without it; "
                    "physically consistent (pseudo-inertia ≽ ε I), with σ that hold the "
                    "robot's own uncertainty.",
        epilog=_PAYLOAD_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("result", help="result file of the robot identified without the payload")
    p.add_argument("recordings", nargs="+", help="runs with the payload (.npz or .csv)")
    p.add_argument("-o", "--output", default="payload.json", help="payload file (JSON)")
    p.add_argument("--robot", default=None,
                   help="robot name or file (default: the one recorded in the result)")
    g = p.add_argument_group("the payload")
    g.add_argument("--link", required=True, help="link (or frame) the payload is fixed to")
    g.add_argument("--name", default="payload", help="its name (default: payload)")
    _pose(g)
    g.add_argument("--epsilon", type=number(0.0, 1e3, above=True), default=1e-6,
                   help="smallest pseudo-inertia eigenvalue (> 0)")
    g.add_argument("--covariance", choices=("auto", "unconstrained", "bootstrap"),
                   default="auto", help="uncertainty (auto: bootstrap when the constraint is "
                                        "active)")
    g.add_argument("--draws", type=whole(2, 100_000), default=200, help="bootstrap draws")
    g.add_argument("--seed", type=whole(0, 2**32 - 1), default=0, help="bootstrap seed")
    recording_options(p)
    p.set_defaults(func=_payload)

    q = sub.add_parser(
        "gains", help="identify the drive gains (torque per ampere) from runs without and "
                      "with a known payload",
        description="Identify each actuator's gain between current and torque by the payload "
                    "method: two runs of one trajectory recording currents, without and with "
                    "a payload of known mass fixed to a link.",
        epilog=_GAINS_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("robot", help="embedded robot name or robot file")
    q.add_argument("empty", help="run without the payload (.npz or .csv)")
    q.add_argument("loaded", help="the same trajectory with the payload")
    q.add_argument("-o", "--output", default="gains.json", help="drive-gains file (JSON)")
    g = q.add_argument_group("the known payload")
    g.add_argument("--link", required=True, help="link (or frame) the payload is fixed to")
    g.add_argument("--payload-mass", type=number(0.0, 1e6, above=True), required=True,
                   metavar="KG", help="its mass, kg (> 0)")
    g.add_argument("--com", type=number(-1e3, 1e3), nargs=3, default=(0.0, 0.0, 0.0),
                   metavar=("X", "Y", "Z"), help="its centre of mass in its frame, m")
    g.add_argument("--inertia", type=number(-1e6, 1e6), nargs=6, default=(0.0,) * 6,
                   metavar=("IXX", "IXY", "IXZ", "IYY", "IYZ", "IZZ"),
                   help="its inertia about the centre of mass, kg·m² (default: a point mass)")
    g.add_argument("--name", default="payload", help="its name (default: payload)")
    _pose(g)
    g.add_argument("--trajectory-tolerance", type=number(0.0, 1.0, above=True), default=0.1,
                   metavar="FRACTION",
                   help="largest RMS difference of the runs' positions, as a fraction of "
                        "each coordinate's range (default 0.1)")
    recording_options(q)
    q.set_defaults(func=_gains)
