"""The ``dynid report`` command.

::

    dynid report result.json run1.npz --validation run2.npz -o report.html

The recordings are read as ``dynid validate`` reads them (the same options: ``--keys``,
``--columns``, ``--units``, ``--trim``...) and processed as the result says. The output file
is checked before anything is read or computed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .._arguments import check_output
from ..identify.cli_recordings import (
    read_recording,
    recording_options,
    report_read,
    trim_per_file,
)

__all__ = ["register"]

_DESCRIPTION = """\
Write one self-contained HTML report of an identification result: measured against
predicted outputs and prediction errors on the identification and validation recordings,
parameters with their uncertainty, physical consistency, condition numbers, residual
whiteness, the essential parameters' steps (a result of --essential), a payload and drive
gains (--payload, --gains) and settings. The recordings are processed as the result says."""

_EXAMPLE = """\
examples:
  dynid report result.json run1.npz run2.npz --validation run3.npz -o report.html
  dynid report robot.json empty.npz --payload payload.json --gains gains.json
"""


def _report(args: argparse.Namespace) -> None:
    from ..identify.bodyfiles import load_drive_gains, load_payload
    from ..identify.result import load_result_and_robot
    from .report import check_model, write_report

    validation = args.validation or []
    extra = [p for p in (args.payload, args.gains) if p is not None]
    check_output(args.output, "-o", inputs=[args.result, *args.recordings, *validation,
                                            *extra])
    result, robot = load_result_and_robot(args.result, args.robot)
    payload = load_payload(args.payload) if args.payload else None
    gains = load_drive_gains(args.gains) if args.gains else None
    check_model(robot, result)
    trims = trim_per_file(args.trim, [*args.recordings, *validation])
    train = {p: read_recording(p, args, robot, trims.get(p)) for p in args.recordings}
    test = {p: read_recording(p, args, robot, trims.get(p)) for p in validation}
    for path, rec in [*train.items(), *test.items()]:
        report_read(path, rec)
    write_report(robot, result, train, args.output, validation=test, title=args.title,
                 progress=not args.quiet, payload=payload, gains=gains)
    size = Path(args.output).stat().st_size
    print(f"wrote {args.output} ({size / 1024:.0f} kB)")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``report`` command to the ``dynid`` parser."""
    p = sub.add_parser("report", help="write an HTML report of an identification result",
                       description=_DESCRIPTION,
                       epilog=_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("result", help="result file written by dynid identify")
    p.add_argument("recordings", nargs="+", help="the recordings it was identified from")
    p.add_argument("--validation", nargs="+", default=None, metavar="REC",
                   help="other recordings to validate on")
    p.add_argument("--robot", default=None,
                   help="robot name or file (default: the one recorded in the result)")
    p.add_argument("-o", "--output", default="report.html", help="HTML file to write")
    p.add_argument("--title", default=None, help="title of the report")
    p.add_argument("--payload", default=None, metavar="FILE",
                   help="payload file written by dynid payload, shown in its own section")
    p.add_argument("--gains", default=None, metavar="FILE",
                   help="drive-gains file written by dynid gains, shown in its own section")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    recording_options(p, processing=False)
    p.set_defaults(func=_report)
