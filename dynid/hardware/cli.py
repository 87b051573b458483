"""``dynid capture ROBOT TRAJECTORY -o run.csv``: run a trajectory on the drives and record it."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._arguments import number, whole

__all__ = ["register"]

_EXAMPLES = """\
examples:
  on the simulated robot (python-can's virtual bus; no hardware):
    dynid capture panda excitation.json --interface virtual -o run.csv
  on a SocketCAN adapter at 1 Mbit/s, drives described in a file:
    dynid capture robot.yaml excitation.json --interface socketcan --channel can0 \\
        --bitrate 1000000 --drives drives.yaml -o run.csv
  then identify from the recording as it is:
    dynid identify panda run.csv

Bus settings not given are taken from python-can's configuration (CAN_INTERFACE, CAN_CHANNEL,
CAN_BITRATE, ~/.canrc or --can-config FILE). Nothing moves before the trajectory, the ramps
and the bus load are checked; a failure stops the motion and keeps every recorded sample.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("capture", help="run a trajectory on the drives and record positions "
                                       "and currents",
                       description="Run a designed trajectory on the robot's CiA 402 drives "
                                   "over CAN (or on the simulated robot with --interface "
                                   "virtual) and record drive-time-stamped positions and "
                                   "outputs.", epilog=_EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("robot", help="embedded robot name or robot file")
    p.add_argument("trajectory", help="trajectory file written by 'dynid design'")
    p.add_argument("-o", "--output", default="run.csv", help="recording to write (CSV)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing recording")
    g = p.add_argument_group("bus (python-can)")
    g.add_argument("--interface", default=None,
                   help="python-can interface: virtual (the simulated robot), socketcan, "
                        "pcan, kvaser, ...")
    g.add_argument("--channel", default=None, help="channel (can0, PCAN_USBBUS1, ...)")
    g.add_argument("--bitrate", type=number(1e3, 1e6), default=None, help="bit/s")
    g.add_argument("--fd", action="store_true", default=None, help="CAN FD frames")
    g.add_argument("--data-bitrate", type=number(1e3, 1.2e7), default=None,
                   help="CAN FD data-phase bit/s")
    g.add_argument("--can-config", default=None, metavar="FILE",
                   help="python-can configuration file")
    g.add_argument("--max-load", type=number(0.0, 1.0, above=True), default=0.9,
                   help="largest worst-case bus load accepted (default 0.9)")
    g = p.add_argument_group("drives")
    g.add_argument("--drives", default=None, metavar="FILE",
                   help="drives file (YAML: nodes, EDS files, encoders, rated values, "
                        "mapping); default: nodes 1..n with the robot's encoders")
    g.add_argument("--rate", type=number(1.0, 8000.0), default=None,
                   help="cycle rate, Hz (default: the drives file's, else 250)")
    g.add_argument("--periods", type=whole(1, 10_000), default=None,
                   help="trajectory periods to record (default: the trajectory's)")
    g.add_argument("--reset-faults", action="store_true",
                   help="reset drives found in FAULT before starting")
    g = p.add_argument_group("simulated robot (--interface virtual)")
    g.add_argument("--seed", type=whole(0, 2**32 - 1), default=0, help="noise seed")
    g.add_argument("--noise", type=number(0.0, 10.0), default=0.01,
                   help="output noise, fraction of the rated value (default 0.01)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_capture)


def run_capture(args: argparse.Namespace) -> None:
    from ..models import load_robot
    from ..trajectories import load_trajectory
    from .capture import capture
    from .settings import BusSettings, DriveSettings

    robot = load_robot(args.robot)
    trajectory = load_trajectory(args.trajectory)
    bus = BusSettings.load(path=args.can_config, interface=args.interface,
                           channel=args.channel, bitrate=args.bitrate, fd=args.fd,
                           data_bitrate=args.data_bitrate)
    if args.drives:
        settings = DriveSettings.from_file(args.drives, robot)
        if args.rate is not None:
            from dataclasses import replace

            settings = replace(settings, rate=args.rate)
    else:
        settings = DriveSettings.defaults(robot, rate=args.rate or 250.0, fd=bus.fd)
    output = Path(args.output)
    options = dict(settings=settings, bus=bus, periods=args.periods, max_load=args.max_load,
                   overwrite=args.overwrite, progress=not args.quiet,
                   reset_faults=args.reset_faults)
    if bus.interface == "virtual":
        from .virtual import VirtualRobot

        options["settings"] = settings = VirtualRobot.lockstep(settings)
        with VirtualRobot.for_capture(robot, settings, bus, noise=args.noise, seed=args.seed):
            result = capture(robot, trajectory, output, **options)
    else:
        result = capture(robot, trajectory, output, **options)
    print(result.summary())
