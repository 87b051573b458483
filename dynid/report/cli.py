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
whiteness and settings. The recordings are processed as the result says."""

_EXAMPLE = """\
example:
  dynid report result.json run1.npz run2.npz --validation run3.npz -o report.html
"""


def _report(args: argparse.Namespace) -> None:
    from ..identify.result import load_result_and_robot
    from .report import check_model, write_report

    validation = args.validation or []
    check_output(args.output, "-o", inputs=[args.result, *args.recordings, *validation])
    result, robot = load_result_and_robot(args.result, args.robot)
    check_model(robot, result)
    trims = trim_per_file(args.trim, [*args.recordings, *validation])
    train = {p: read_recording(p, args, robot, trims.get(p)) for p in args.recordings}
    test = {p: read_recording(p, args, robot, trims.get(p)) for p in validation}
    for path, rec in [*train.items(), *test.items()]:
        report_read(path, rec)
    write_report(robot, result, train, args.output, validation=test, title=args.title,
                 progress=not args.quiet)
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
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    recording_options(p, processing=False)
    p.set_defaults(func=_report)
