"""Parameter files: an identification's parameters with names, units, σ and base combinations,
in YAML or JSON, and the model and result they came from.

A parameter file is for people and for programs. People read its two tables: every standard
parameter with its unit, group, value and standard deviation (σ of its identifiable part), and
every base parameter (the combination it stands for) with its value and σ. Programs get the
same model and result back from :func:`load_parameters`: the file names the robot's source (an
embedded robot or a robot file), the model's output and its terms with their sign smoothing,
and keeps the rest of the result (covariances, base matrix, noise, the estimator's and the
processing's settings, solver details)::

    format: dynid-parameters
    version: 1
    robot: ariane                      # embedded name or robot file (relative to this file)
    model: {output: current, terms: [{parameters: [joint1.fv, joint1.fc], smoothing: 0.02}]}
    method: consistent
    parameters:
      - {name: link1.m, unit: kg, group: link, value: 4.1, std: 0.02}
    base:
      - {name: link1.Izz + ..., value: 0.031, std: 0.0004}
    result: {...}                      # the rest of the result file

The tables' values are the ones :func:`load_parameters` returns. YAML (``.yaml``, ``.yml``) and
JSON (``.json``) hold the same; the format follows the file's suffix.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from .._files import excerpt, load_yaml, read_structured
from ..errors import DataError, ModelError
from ..identify.result import IdentificationResult
from ..models import Robot, load_robot

__all__ = ["ParameterFile", "load_parameters", "save_parameters"]

FORMAT = "dynid-parameters"
VERSION = 1
_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}


@dataclass(frozen=True)
class ParameterFile:
    """What a parameter file gives back: the model and the identification result."""

    robot: Robot
    result: IdentificationResult


def _kind(path: Path) -> str:
    kind = _SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise DataError(f"parameter file {path}: expected a .yaml, .yml or .json suffix, "
                        f"found {path.suffix or 'none'!r}")
    return kind


def _std(cov: np.ndarray) -> list[float]:
    return np.sqrt(np.clip(np.diag(cov), 0.0, None)).tolist()


def _model(robot: Robot) -> dict:
    terms = []
    for term in robot.terms:
        entry = {"parameters": [p.name for p in term.parameters]}
        if getattr(term, "smoothing", 0.0):
            entry["smoothing"] = float(term.smoothing)
        terms.append(entry)
    return {"output": robot.output, "terms": terms}


def parameter_tables(robot: Robot, result: IdentificationResult) -> dict:
    """The file's content as a mapping (see the module docstring)."""
    if tuple(robot.parameters.names) != tuple(result.names):
        raise DataError(f"the result's {len(result.names)} parameters are not those of the "
                        f"robot {robot.name!r} ({len(robot.parameters)}); give the robot the "
                        "result was identified with")
    source = robot.source or result.robot_source
    if source is None:
        raise DataError(f"robot {robot.name!r}: its source is unknown (it was not loaded by "
                        "load_robot), so the file could not give the model back; load it with "
                        "dynid.load_robot(name or robot file)")
    groups = [p.group for p in robot.parameters]
    rest = result.to_json()
    par, base = rest.pop("parameters"), rest.pop("base")
    rest["covariance"], rest["base_matrix"] = par["covariance"], base["matrix"]
    rest["base_covariance"] = base["covariance"]
    for key in ("format", "version", "method", "robot", "robot_source", "output"):
        rest.pop(key)
    return {
        "format": FORMAT, "version": VERSION, "robot": source, "model": _model(robot),
        "method": result.method,
        "parameters": [{"name": n, "unit": u, "group": g, "value": v, "std": s}
                       for n, u, g, v, s in zip(result.names, result.units, groups,
                                                result.params.tolist(), _std(result.cov),
                                                strict=True)],
        "base": [{"name": n, "value": v, "std": s}
                 for n, v, s in zip(result.base_names, result.base_params.tolist(),
                                    _std(result.base_cov), strict=True)],
        "result": rest,
    }


def save_parameters(result: IdentificationResult, path: str | Path, *,
                    robot: Robot | None = None) -> Path:
    """Write ``result`` (identified on ``robot``, default: the result's robot source) as a
    parameter file, YAML or JSON after the suffix; returns the path.

    Examples
    --------
    >>> est = dynid.PhysicallyConsistent().fit(dynid.IdentificationData(robot, recordings))
    >>> save_parameters(est.result_, "panda-parameters.yaml", robot=robot)
    >>> back = load_parameters("panda-parameters.yaml")   # back.robot, back.result
    """
    path = Path(path)
    kind = _kind(path)
    if robot is None:
        if result.robot_source is None:
            raise DataError("the result does not say which robot it belongs to; pass robot=")
        robot = load_robot(result.robot_source)
    data = parameter_tables(robot, result)
    if kind == "json":
        text = json.dumps(data, indent=1)
    else:
        text = yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100,
                              allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_parameters(path: str | Path) -> ParameterFile:
    """Read a parameter file: the model it names and the result it holds."""
    path = Path(path)
    kind = _kind(path)
    if kind == "json":
        data = read_structured(path, "parameter file", "JSON", json.loads,
                               json.JSONDecodeError, DataError)
    else:
        data = read_structured(path, "parameter file", "YAML", load_yaml, yaml.YAMLError,
                               DataError)
    where = f"parameter file {path}"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DataError(f"{where}: not a dynid parameter file (expected format: {FORMAT})")
    if data.get("version") != VERSION:
        raise DataError(f"{where}: version {excerpt(data.get('version'))}, this dynid reads "
                        f"version {VERSION}")
    missing = [k for k in ("robot", "model", "method", "parameters", "base", "result")
               if k not in data]
    if missing:
        raise DataError(f"{where}: {missing[0]}: missing entry")
    robot = _robot(data, path, where)
    result = IdentificationResult.from_json(_result_json(data, where), where)
    if tuple(robot.parameters.names) != result.names:
        raise DataError(f"{where}: its parameters are not those of the robot "
                        f"{excerpt(data['robot'])} as the file describes it; was the robot "
                        "file changed since?")
    return ParameterFile(robot, result)


def _table(data: dict, key: str, fields: tuple[str, ...], where: str) -> dict[str, list]:
    rows = data[key]
    if not isinstance(rows, list) or not rows:
        raise DataError(f"{where}: {key}: expected a list of entries, found {excerpt(rows)}")
    columns: dict[str, list] = {f: [] for f in fields}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or any(f not in row for f in fields):
            raise DataError(f"{where}: {key}[{i}]: expected an entry with "
                            f"{', '.join(fields)}, found {excerpt(row)}")
        for f in fields:
            columns[f].append(row[f])
    return columns


def _result_json(data: dict, where: str) -> dict:
    rest = data["result"]
    if not isinstance(rest, dict):
        raise DataError(f"{where}: result: expected a mapping, found {excerpt(rest)}")
    rest = dict(rest)
    par = _table(data, "parameters", ("name", "unit", "value"), where)
    base = _table(data, "base", ("name", "value"), where)
    try:
        cov, matrix, base_cov = (rest.pop(k) for k in ("covariance", "base_matrix",
                                                        "base_covariance"))
    except KeyError as exc:
        raise DataError(f"{where}: result.{exc.args[0]}: missing entry") from None
    return {**rest, "format": "dynid-result", "version": 1, "method": data["method"],
            "robot": str(data["robot"]), "robot_source": str(data["robot"]),
            "output": data["model"].get("output") if isinstance(data["model"], dict) else None,
            "parameters": {"names": par["name"], "units": par["unit"], "values": par["value"],
                           "covariance": cov},
            "base": {"names": base["name"], "matrix": matrix, "values": base["value"],
                     "covariance": base_cov}}


def _robot(data: dict, path: Path, where: str) -> Robot:
    source, model = data["robot"], data["model"]
    if not isinstance(source, str) or not source:
        raise DataError(f"{where}: robot: expected an embedded robot's name or a robot file, "
                        f"found {excerpt(source)}")
    if not isinstance(model, dict) or not isinstance(model.get("terms", []), list):
        raise DataError(f"{where}: model: expected {{output: ..., terms: [...]}}, found "
                        f"{excerpt(model)}")
    file = Path(source)
    if not file.is_absolute() and (path.parent / file).is_file():
        source = str(path.parent / file)
    try:
        robot = load_robot(source)
        if "output" in model:
            robot = robot.with_output(model["output"])
    except ModelError as exc:
        raise DataError(f"{where}: robot: {exc}") from None
    by_names = {tuple(p.name for p in t.parameters): t for t in robot.terms}
    terms = []
    for i, entry in enumerate(model.get("terms", [])):
        names = tuple(entry.get("parameters", ())) if isinstance(entry, dict) else ()
        if names not in by_names:
            raise DataError(f"{where}: model.terms[{i}]: no term of {robot.name!r} has the "
                            f"parameters {excerpt(list(names))}; was the robot file changed "
                            "since?")
        term = by_names[names]
        if entry.get("smoothing", 0.0) != getattr(term, "smoothing", 0.0):
            term = copy.copy(term)
            term.smoothing = float(entry["smoothing"])
        terms.append(term)
    return robot.with_terms(terms)
