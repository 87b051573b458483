"""Command-line options for recordings, shared by ``dynid identify`` and ``dynid validate``:
the files' columns, units, time stamps, column maps and per-file trims, read into recordings."""

from __future__ import annotations

import argparse
from pathlib import Path

from .._arguments import number, whole, word_or
from .._files import excerpt
from ..errors import DataError

__all__ = ["read_recording", "recording_options", "report_read", "trim_per_file"]

_SIGNALS = ("time", "positions", "velocities", "accelerations", "output")


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    out = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise DataError(f"{option}: expected SIGNAL=VALUE, found {excerpt(item)}")
        key = key.strip()
        if key not in _SIGNALS:
            raise DataError(f"{option} {excerpt(item)}: unknown signal {excerpt(key)}; "
                            f"expected one of {', '.join(_SIGNALS)}")
        if key in out:
            raise DataError(f"{option}: {key} given twice")
        out[key] = value.strip()
    return out


def _units(values: list[str] | None) -> dict[str, str | list[str]]:
    """``--units`` values: one unit per signal, or one per column separated by commas."""
    return {k: [u.strip() for u in v.split(",")] if "," in v else v
            for k, v in _pairs(values, "--units").items()}


def recording_options(parser: argparse.ArgumentParser, *, processing: bool = True) -> None:
    """Add the options that say how to read recordings, and with ``processing`` those that
    set how they are processed."""
    g = parser.add_argument_group(
        "recordings", "A recording is a file (.npz, .csv, .txt...) or files of equal length "
                      "given as one argument SIGNAL=FILE,SIGNAL=FILE (positions=q.csv,"
                      "output=tau.csv).")
    g.add_argument("--keys", action="append", metavar="SIGNAL=ARRAY",
                   help="NPZ array holding a signal (time, positions, velocities, "
                        "accelerations, output)")
    g.add_argument("--columns", action="append", metavar="SIGNAL=COL[,COL...]",
                   help="table columns of a signal: header names or indices, 0 for the first "
                        "(time=t, positions=q1,q2 or positions=1,2); flat:N for N values per "
                        "sample flattened over the whole file (flat:N:COL in one column); a "
                        "signal in its own file and not listed takes all its columns")
    g.add_argument("--delimiter", default=",", type=_delimiter,
                   help="field separator of text tables (default ','; 'tab' for tabs, "
                        "'space' for spaces and tabs)")
    g.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="whether the first row of a table is a header (default: auto, when one "
                        "of its fields is not a number)")
    g.add_argument("--rate", type=number(1e-3, 1e6), default=None, metavar="HZ",
                   help="sample rate of files without a time column, Hz")
    g.add_argument("--trim", action="append", metavar="[FILE=]START[:END]",
                   help="samples dropped at the start and the end of a recording file: a "
                        "whole number of samples, or seconds ending in s (run1.csv=500, "
                        "run1.csv=500:20, val.npz=2.5s:1s); without FILE=, every file. "
                        "Repeat it per file")
    g.add_argument("--timestamps", choices=("check", "strict", "resample", "uniform", "keep"),
                   default="check",
                   help="irregular time stamps: check (refuse duplicates and gaps, warn of "
                        "jitter), strict (refuse any), resample (cubic spline onto a uniform "
                        "grid), uniform (stamps replaced by their least-squares line), keep")
    g.add_argument("--column-map", default=None, metavar="FILE",
                   help="YAML file of a linear map from the coordinates to the columns "
                        "(matrix, joint_offset, offset): columns that are sums of joints or "
                        "motor-side coordinates")
    g.add_argument("--units", action="append", metavar="SIGNAL=UNIT",
                   help="unit of a signal (deg, mm, ms, mA, inc, ...)")
    g.add_argument("--space", choices=("basis", "actuator"), default=None,
                   help="where the positions were measured (default: basis)")
    g.add_argument("--output-kind", choices=("joint_torque", "motor_torque", "current"),
                   default=None, help="what the output signal is (default: from its unit)")
    if not processing:
        return
    g = parser.add_argument_group("processing")
    # Processing options are left out of the namespace unless given (SUPPRESS), so that
    # "none" can stand for None.
    hz = number(0.01, 1e6)
    g.add_argument("--skip", type=whole(0, 10**9), default=argparse.SUPPRESS,
                   help="samples dropped at the start of every recording, kept in the result "
                        "as a processing setting (validate does not apply it; use --trim "
                        "per file)")
    g.add_argument("--cutoff", type=word_or(hz, auto="auto", none=None),
                   default=argparse.SUPPRESS, metavar="HZ|auto|none",
                   help="Butterworth low-pass of the positions, Hz")
    g.add_argument("--order", type=whole(1, 20), default=argparse.SUPPRESS,
                   help="order of that filter (1 to 20)")
    g.add_argument("--derivatives", choices=("auto", "positions", "velocities", "recorded"),
                   default=argparse.SUPPRESS, help="velocities and accelerations from the "
                   "positions, from recorded velocities (filtered, differentiated), as "
                   "recorded, or auto (default: as recorded, else velocities, else positions)")
    g.add_argument("--differentiation", choices=("auto", "butterworth", "savgol", "rts"),
                   default=argparse.SUPPRESS, help="how positions are smoothed and "
                   "differentiated at the cutoff: Butterworth and central differences, "
                   "Savitzky-Golay, or a Rauch-Tung-Striebel smoother (auto: butterworth)")
    speeds = word_or(lambda text: tuple(number(0.0)(x) for x in text.split(",")),
                     auto="auto", none=None)
    g.add_argument("--deadzone", type=speeds, default=argparse.SUPPRESS,
                   metavar="V[,V...]|auto|none", help="leave out a joint's rows where its speed "
                   "is below V rad/s (m/s); one value, or one per joint")
    g.add_argument("--rest", type=word_or(number(0.0, 1e6, above=True), auto="auto", none=None),
                   default=argparse.SUPPRESS, metavar="S|auto|none",
                   help="leave out spans of S s or more with every joint in its dead zone")
    g.add_argument("--output-cutoff", type=word_or(hz, none=None), default=argparse.SUPPRESS,
                   metavar="HZ|none", help="low-pass of the output, Hz (default: not filtered)")
    g.add_argument("--model-cutoff", type=word_or(hz, auto="auto", none=None),
                   default=argparse.SUPPRESS, metavar="HZ|auto|none",
                   help="low-pass of the regressor (and of the prediction in validation), Hz, "
                        "for an output the logger low-passed before writing it; auto "
                        "(default): looked for when the output has no noise floor")
    g.add_argument("--decimate", type=word_or(whole(1, 10_000), auto="auto"),
                   default=argparse.SUPPRESS, metavar="N|auto",
                   help="filter regressor and output alike and keep 1 sample in N (1 to 10000)")
    g.add_argument("--delay", type=word_or(number(-1e3, 1e3), estimate="estimate", none=None),
                   default=argparse.SUPPRESS, metavar="S|estimate|none",
                   help="delay of the output behind the positions, s (e.g. 0.003), compensated; "
                        "estimate: estimated by identification (and the recorded velocities' "
                        "delay, when they are recorded), kept in the result for validation")
    g.add_argument("--period", type=number(0.0, 1e6, above=True), default=argparse.SUPPRESS,
                   help="period of a periodic excitation, s (averages the periods)")
    g.add_argument("--harmonics-cutoff", type=hz, default=argparse.SUPPRESS,
                   help="frequency-domain low-pass of the averaged period, Hz")


def _delimiter(text: str) -> str | None:
    """``--delimiter``: one character; ``tab`` or ``\\t`` for a tab, ``space`` for spaces and
    tabs."""
    if text in ("space", "spaces", "whitespace"):
        return None
    return "\t" if text in ("tab", "\\t") else text


def _column(text: str):
    """A column of ``--columns``: an index (digits) or a header name."""
    return int(text) if text.isdigit() else text


def _columns(args: argparse.Namespace) -> dict:
    """``--columns`` as reader arguments: lists of columns, or ``flat:N[:COL]``."""
    from .tables import Flat

    out = {}
    for key, value in _pairs(args.columns, "--columns").items():
        if value.startswith("flat:"):
            parts = value.split(":")
            if len(parts) not in (2, 3) or not parts[1].isdigit() or key == "time":
                raise DataError(f"--columns {key}={excerpt(value)}: expected flat:N or "
                                "flat:N:COL (N values per sample), e.g. positions=flat:7")
            out[key] = Flat(int(parts[1]), _column(parts[2]) if len(parts) == 3 else None)
        elif key == "time":
            if "," in value:
                raise DataError(f"--columns time={excerpt(value)}: expected one column")
            out[key] = _column(value)
        else:
            out[key] = [_column(c.strip()) for c in value.split(",")]
    return out


def _sources(path: str) -> str | dict[str, str]:
    """A recording argument: a file, or SIGNAL=FILE,SIGNAL=FILE for one split over files."""
    if "=" not in path or Path(path).exists():
        return path
    files = {}
    for item in path.split(","):
        key, sep, value = item.partition("=")
        if not sep or key.strip() not in _SIGNALS or not value.strip() or "=" in value:
            raise DataError(f"recording {excerpt(path, 200)}: expected a file, or SIGNAL=FILE "
                            f"pairs separated by commas (signals: {', '.join(_SIGNALS)}), e.g. "
                            "positions=q.csv,output=tau.csv")
        files[key.strip()] = value.strip()
    return files


def trim_per_file(values: list[str] | None, recordings: list[str]) -> dict[str, object]:
    """``--trim`` values: recording argument → trim; unknown files are refused."""
    from .trims import Trim

    out: dict[str, object] = {}
    for item in values or []:
        target, sep, text = item.rpartition("=")
        names = [r for r in recordings if sep and target in (r, Path(r).name)] if sep else \
            list(recordings)
        if sep and not names:
            raise DataError(f"--trim {excerpt(item)}: {excerpt(target)} is none of the "
                            f"recordings ({', '.join(recordings)}); give FILE=START[:END] with "
                            "a recording as listed, or START[:END] for every one")
        trim = Trim.parse(text)
        for name in names:
            if name in out and sep:
                raise DataError(f"--trim: {name} trimmed twice")
            out[name] = trim
    return out


def read_recording(path: str, args: argparse.Namespace, robot, trim=None):
    from ._csvmeta import is_recording
    from .columns import load_column_map
    from .readers import read_csv, read_npz

    units = _units(args.units)
    options = {"rate": args.rate, "timestamps": args.timestamps, "robot": robot,
               "output_kind": args.output_kind,
               "column_map": load_column_map(args.column_map) if args.column_map else None}
    source = _sources(path)
    if isinstance(source, str) and Path(source).suffix.lower() == ".npz":
        return read_npz(source, keys=_pairs(args.keys, "--keys"), units=units or None,
                        space=args.space, trim=trim, **options)
    cols = _columns(args)
    if isinstance(source, str) and not (is_recording(source) and not cols):
        missing = {"positions", "output"} - set(cols)
        if missing or ("time" not in cols and args.rate is None):
            need = sorted(missing | ({"time"} if "time" not in cols and args.rate is None
                                     else set()))
            raise DataError(f"{path}: CSV recordings need --columns for {need} (or --rate for "
                            "a file without a time column), e.g. --columns time=t --columns "
                            "positions=q1,q2 --columns output=tau1,tau2; recordings written "
                            "by dynid's capture carry their columns")
    header = {"auto": None, "yes": True, "no": False}[args.header]
    if isinstance(source, dict) and trim is not None:
        trim = dict.fromkeys(source, trim)
    return read_csv(source, **cols, units=units, space=args.space, header=header,
                    delimiter=args.delimiter, trim=trim, **options)


def report_read(path: str, recording) -> None:
    """What was done to a recording as it was read, one line."""
    done = [h for h in recording.history if not h.startswith("read ")]
    print(f"recording    {path}: {recording.n_samples} samples at {recording.rate:.6g} Hz"
          + (f"; {'; '.join(done)}" if done else "; used as recorded"))
