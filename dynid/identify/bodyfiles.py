"""Files of identified payloads and drive gains: JSON, checked as result files are.

::

    {"format": "dynid-payload", "version": 1, "name": "box", "parent": "flange",
     "xyz": [...], "rpy": [...], "names": [...], "values": [...], "covariance": [[...]],
     "covariance_method": "unconstrained", "unconstrained": {...}, "fit": {...}, ...}

    {"format": "dynid-drive-gains", "version": 1, "names": [...], "units": [...],
     "gains": [...], "covariance": [[...]], "base": {...}, ...}

Each holds the estimate, its covariance and the settings it was obtained with
(``settings``: the payload body and trajectory tolerance of the drive gains, the constraint
and bootstrap settings of a payload, and the files a command read), so a later stage (a
report, a model with the gains as its torque constants) reads it back whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._files import read_structured
from ..errors import DataError
from ._payloadfit import PayloadFit
from .gains import DriveGains
from .payload import Payload
from .processing import Processing
from .residuals import Whiteness
from .result import _plain, _Schema

__all__ = ["load_drive_gains", "load_payload", "save_drive_gains", "save_payload"]

PAYLOAD, GAINS, VERSION = "dynid-payload", "dynid-drive-gains", 1


def payload_to_json(p: Payload) -> dict:
    return {"format": PAYLOAD, "version": VERSION, "name": p.name, "parent": p.parent,
            "xyz": list(p.xyz), "rpy": list(p.rpy), "names": list(p.names),
            "values": p.params.tolist(), "covariance": p.cov.tolist(),
            "covariance_method": p.covariance_method,
            "unconstrained": {"values": p.unconstrained.tolist(),
                              "covariance": p.unconstrained_cov.tolist()},
            "robot_uncertainty": p.robot_uncertainty, "noise_sigma": p.noise_sigma.tolist(),
            "output_names": list(p.output_names), "n_samples": p.n_samples,
            "processing": p.processing.to_dict(),
            "fit": {"R": p.fit.R.tolist(), "epsilon": p.fit.epsilon, "status": p.fit.status},
            "whiteness": None if p.whiteness is None else p.whiteness.to_json(),
            "settings": p.settings}


def payload_from_json(data: object, where: str = "payload") -> Payload:
    check = _header(data, where, PAYLOAD, "dynid payload",
                    ("name", "parent", "xyz", "rpy", "names", "values", "covariance",
                     "covariance_method", "unconstrained", "robot_uncertainty", "noise_sigma",
                     "output_names", "n_samples", "processing", "fit"),
                    ("whiteness", "settings"))
    for key in ("xyz", "rpy"):
        check.numbers(data[key], key, (3,))
    check.names(data["names"], "names", 10)
    values = np.array(check.numbers(data["values"], "values", (10,)), float)
    cov = np.array(check.numbers(data["covariance"], "covariance", (10, 10)), float)
    free = data["unconstrained"]
    check.entries(free, "unconstrained", ("values", "covariance"))
    n = len(check.names(data["output_names"], "output_names"))
    sigma = np.array(check.numbers(data["noise_sigma"], "noise_sigma", (n,)), float)
    fit = data["fit"]
    check.entries(fit, "fit", ("R", "epsilon", "status"))
    R = np.array(check.numbers(fit["R"], "fit.R", (10, 10)), float)
    start = np.array(check.numbers(free["values"], "unconstrained.values", (10,)), float)
    epsilon = check.numbers([fit["epsilon"]], "fit.epsilon", (1,))[0]
    if not epsilon > 0:
        raise check.fail("fit.epsilon", "a number > 0", epsilon)
    return Payload(
        name=_text(check, data, "name"), parent=_text(check, data, "parent"),
        xyz=tuple(data["xyz"]), rpy=tuple(data["rpy"]), names=tuple(data["names"]),
        params=values, cov=cov, covariance_method=_text(check, data, "covariance_method"),
        unconstrained=start,
        unconstrained_cov=np.array(check.numbers(free["covariance"], "unconstrained.covariance",
                                                 (10, 10)), float),
        robot_uncertainty=bool(data["robot_uncertainty"]), noise_sigma=sigma,
        output_names=tuple(data["output_names"]), n_samples=_count(check, data),
        processing=_processing(data, where),
        fit=PayloadFit(R, start, epsilon=epsilon),
        whiteness=_whiteness(data.get("whiteness"), where), settings=_settings(check, data))


def gains_to_json(g: DriveGains) -> dict:
    return {"format": GAINS, "version": VERSION, "names": list(g.names), "units": list(g.units),
            "gains": g.gains.tolist(), "covariance": g.cov.tolist(),
            "base": {"names": list(g.base_names), "values": g.base_params.tolist()},
            "joint_covariance": g.joint_cov.tolist(), "noise_sigma": g.noise_sigma.tolist(),
            "payload_effect": g.payload_effect,
            "motion_difference": g.motion_difference.tolist(), "n_samples": g.n_samples,
            "passes": g.passes, "processing": g.processing.to_dict(), "settings": g.settings}


def gains_from_json(data: object, where: str = "drive gains") -> DriveGains:
    check = _header(data, where, GAINS, "dynid drive-gains",
                    ("names", "units", "gains", "covariance", "base", "joint_covariance",
                     "noise_sigma", "payload_effect", "motion_difference", "n_samples",
                     "passes", "processing"), ("settings",))
    n = len(check.names(data["names"], "names"))
    check.names(data["units"], "units", n, unique=False)
    gains = np.array(check.numbers(data["gains"], "gains", (n,)), float)
    check.entries(data["base"], "base", ("names", "values"))
    b = len(check.names(data["base"]["names"], "base.names"))
    base = np.array(check.numbers(data["base"]["values"], "base.values", (b,)), float)
    joint = np.array(check.numbers(data["joint_covariance"], "joint_covariance",
                                   (b + n, b + n)), float)
    passes = data["passes"]
    if type(passes) is not int or passes < 0:
        raise check.fail("passes", "a whole number ≥ 0", passes)
    return DriveGains(
        names=tuple(data["names"]), units=tuple(data["units"]), gains=gains,
        cov=np.array(check.numbers(data["covariance"], "covariance", (n, n)), float),
        base_names=tuple(data["base"]["names"]), base_params=base, joint_cov=joint,
        noise_sigma=np.array(check.numbers(data["noise_sigma"], "noise_sigma", (n,)), float),
        payload_effect=check.numbers([data["payload_effect"]], "payload_effect", (1,))[0],
        motion_difference=np.array(check.numbers(data["motion_difference"],
                                                 "motion_difference", (n,)), float),
        n_samples=_count(check, data), passes=passes, processing=_processing(data, where),
        settings=_settings(check, data))


def save_payload(payload: Payload, path: str | Path) -> Path:
    """Write an identified payload as JSON; returns the path."""
    return _write(payload_to_json(payload), path)


def load_payload(path: str | Path) -> Payload:
    """Read a payload file written by :func:`save_payload` (``dynid payload``).

    Examples
    --------
    >>> payload = load_payload("payload.json")                # doctest: +SKIP
    >>> robot = replace(robot, bodies=(payload.body(),))       # doctest: +SKIP
    """
    return payload_from_json(_read(path, "payload file"), Path(path).name)


def save_drive_gains(gains: DriveGains, path: str | Path) -> Path:
    """Write identified drive gains as JSON; returns the path."""
    return _write(gains_to_json(gains), path)


def load_drive_gains(path: str | Path) -> DriveGains:
    """Read a drive-gains file written by :func:`save_drive_gains` (``dynid gains``).

    Examples
    --------
    >>> gains = load_drive_gains("gains.json")                 # doctest: +SKIP
    >>> model = gains.robot(dynid.load_robot("panda"))         # current output, these gains
    """
    return gains_from_json(_read(path, "drive-gains file"), Path(path).name)


def _write(data: dict, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(data, indent=1, default=_plain))
    return path


def _read(path: str | Path, what: str) -> object:
    return read_structured(path, what, "JSON", json.loads, json.JSONDecodeError, DataError)


def _header(data: object, where: str, form: str, what: str, required: tuple,
            optional: tuple) -> _Schema:
    if not isinstance(data, dict) or data.get("format") != form:
        raise DataError(f"{where}: not a {what} file (expected \"format\": \"{form}\")")
    if data.get("version") != VERSION:
        raise DataError(f"{where}: {what} format version {data.get('version')!r}, this dynid "
                        f"reads version {VERSION}")
    check = _Schema(where)
    check.entries(data, "", ("format", "version", *required), optional)
    return check


def _text(check: _Schema, data: dict, key: str) -> str:
    if not isinstance(data[key], str) or not data[key]:
        raise check.fail(key, "a name (text)", data[key])
    return data[key]


def _count(check: _Schema, data: dict) -> int:
    count = data["n_samples"]
    if type(count) is not int or count < 1:
        raise check.fail("n_samples", "a whole number ≥ 1", count)
    return count


def _settings(check: _Schema, data: dict) -> dict:
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise check.fail("settings", "a JSON object", settings)
    return settings


def _processing(data: dict, where: str) -> Processing:
    if not isinstance(data["processing"], dict):
        raise DataError(f"{where}: processing: expected a JSON object")
    try:
        return Processing.from_dict(data["processing"])
    except (DataError, TypeError) as exc:
        raise DataError(f"{where}: processing: {exc}") from None


def _whiteness(entry: object, where: str) -> Whiteness | None:
    if entry is None:
        return None
    try:
        return Whiteness.from_json(entry)
    except (DataError, TypeError, KeyError, AttributeError) as exc:
        raise DataError(f"{where}: whiteness: {exc}") from None
