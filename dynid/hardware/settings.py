"""Bus and drive settings: from arguments, python-can's configuration, or a drives file.

:class:`BusSettings` are python-can's: the interface (``socketcan``, ``pcan``, ``kvaser``,
``virtual``…), the channel, the bitrate, CAN FD and its data bitrate. Values not given are
looked up the way python-can does (:func:`can.util.load_config`: the environment variables
``CAN_INTERFACE``, ``CAN_CHANNEL``, ``CAN_BITRATE``, then ``~/.canrc``, ``~/.can`` or
``/etc/can.conf``, or a file and section given).

:class:`DriveSettings` say which node drives which actuator and how its units convert: node
IDs, the drives' EDS/DCF files (default: the CiA 402 dictionary of
:mod:`~dynid.hardware.dictionary`), encoder resolution, gear ratio, zero, rated current or
torque (default: read from each drive, objects 0x6075/0x6076), the PDO mapping, the cycle
rate and the limits the capture enforces. A drives file (YAML) holds the same::

    rate: 500                     # Hz
    mapping: {tpdos: [[position, current], [timestamp]]}
    following_error: 0.05         # rad (or m) on every actuator
    drives:                       # one per actuator, in the robot's order
      - {node: 1, eds: drive.eds, increments_per_turn: 4096, gear_ratio: 1, zero: 0}
      - {node: 2, increments_per_turn: 4096, rated: 2.5}
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import DriveConfigError
from .pdo import PdoMapping, Scaling

__all__ = ["BusSettings", "DriveSettings", "NodeSettings"]

_KNOWN_BUS = {"interface", "channel", "bitrate", "fd", "data_bitrate"}


@dataclass(frozen=True)
class BusSettings:
    """A python-can bus: interface, channel, bitrate (bit/s), CAN FD and its data bitrate,
    plus any other keyword the interface takes (``options``)."""

    interface: str = "virtual"
    channel: str | int | None = "dynid"
    bitrate: float = 1e6
    fd: bool = False
    data_bitrate: float | None = None
    options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.interface, str) or not self.interface:
            raise DriveConfigError(f"interface: expected a python-can interface name "
                                   f"(socketcan, pcan, kvaser, virtual...), found "
                                   f"{self.interface!r}")
        if not (np.isfinite(self.bitrate) and self.bitrate > 0):
            raise DriveConfigError(f"bitrate: expected bit/s > 0 (e.g. 1000000), found "
                                   f"{self.bitrate!r}")
        if self.data_bitrate is not None and not self.fd:
            raise DriveConfigError("data_bitrate is given without fd; CAN FD must be on for a "
                                   "data-phase bitrate (--fd)")
        if self.data_bitrate is not None and not (np.isfinite(self.data_bitrate)
                                                  and self.data_bitrate >= self.bitrate):
            raise DriveConfigError(f"data_bitrate: expected bit/s ≥ the bitrate "
                                   f"{self.bitrate:g}, found {self.data_bitrate!r}")

    @classmethod
    def load(cls, *, path: str | Path | None = None, context: str | None = None,
             **given) -> BusSettings:
        """Settings from the arguments given (``None`` values are not given), completed from
        python-can's configuration sources (see the module docstring)."""
        import can

        given = {k: v for k, v in given.items() if v is not None}
        if path is not None and not Path(path).is_file():
            raise DriveConfigError(f"bus configuration file {path}: no such file")
        try:
            config = dict(can.util.load_config(path=path, config=dict(given), context=context))
        except (can.CanError, ValueError, KeyError) as exc:
            raise DriveConfigError(f"bus configuration: {exc}") from None
        config = {k: v for k, v in config.items() if v is not None}
        known = {k: config.pop(k) for k in list(config) if k in _KNOWN_BUS}
        known.setdefault("interface", "virtual")
        if known["interface"] == "virtual":
            known.setdefault("channel", "dynid")
        try:
            if "bitrate" in known:
                known["bitrate"] = float(known["bitrate"])
            if "data_bitrate" in known:
                known["data_bitrate"] = float(known["data_bitrate"])
        except (TypeError, ValueError):
            raise DriveConfigError(f"bitrate: expected numbers, found {known}") from None
        known["fd"] = str(known.get("fd", False)).lower() in ("1", "true", "yes", "on")
        return cls(**known, options=config)

    def kwargs(self) -> dict:
        """Keyword arguments of :class:`can.Bus`."""
        out = {"interface": self.interface, "channel": self.channel,
               "bitrate": int(self.bitrate), **self.options}
        if self.fd:
            out["fd"] = True
            if self.data_bitrate is not None:
                out["data_bitrate"] = int(self.data_bitrate)
        if self.interface == "virtual":
            out.pop("bitrate")  # the virtual bus has no timing; the budget still uses it
        return out


@dataclass(frozen=True)
class NodeSettings:
    """One drive: its node ID, its dictionary file (``None``: the default CiA 402 one), and
    its unit scaling (``rated`` ``None``: read from the drive when it is opened)."""

    node: int
    scaling: Scaling
    dictionary: Path | None = None
    rated_from_drive: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.node, int | np.integer) or not 1 <= int(self.node) <= 127:
            raise DriveConfigError(f"node ID: expected an integer from 1 to 127, found "
                                   f"{self.node!r}")


@dataclass(frozen=True)
class DriveSettings:
    """The drives of a robot (one :class:`NodeSettings` per actuator, in its order), their
    PDO mapping, the cycle rate (Hz) and what the capture enforces.

    Parameters
    ----------
    following_error
        Largest position error (rad or m) per actuator before the capture stops, scalar or
        (n,); ``None``: 5 % of each actuator's range of motion on the trajectory, at least
        200 encoder increments.
    feedback_timeout
        Seconds without complete feedback from the drives before the capture stops (the
        watchdog); ``None``: ten cycles, at least 100 ms.
    feedback_wait
        Seconds a cycle waits for its feedback before it is dropped from the recording and
        counted; ``None``: two periods, at least 5 ms, at most a fifth of the watchdog.
    sdo_timeout
        Seconds a drive has to answer a configuration request.
    """

    nodes: tuple[NodeSettings, ...]
    mapping: PdoMapping
    rate: float = 250.0
    following_error: float | np.ndarray | None = None
    feedback_timeout: float | None = None
    sdo_timeout: float = 0.5
    feedback_wait: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(self.nodes))
        ids = [int(s.node) for s in self.nodes]
        if not ids:
            raise DriveConfigError("drives: expected one node per actuator, found none")
        if len(set(ids)) != len(ids):
            raise DriveConfigError(f"drives: node IDs must differ, found {ids}")
        if not (np.isfinite(self.rate) and self.rate > 0):
            raise DriveConfigError(f"rate: expected a cycle rate > 0 Hz, found {self.rate!r}")
        for name in ("feedback_timeout", "sdo_timeout", "feedback_wait"):
            value = getattr(self, name)
            if value is not None and not (np.isfinite(value) and value > 0):
                raise DriveConfigError(f"{name}: expected seconds > 0, found {value!r}")
        if self.following_error is not None:
            fe = np.asarray(self.following_error, dtype=float)
            if fe.ndim > 1 or fe.size not in (1, len(ids)) or not np.all(fe > 0):
                raise DriveConfigError(f"following_error: expected a limit > 0 or one per "
                                       f"drive ({len(ids)}), found {self.following_error!r}")

    @property
    def node_ids(self) -> tuple[int, ...]:
        return tuple(int(s.node) for s in self.nodes)

    @property
    def scalings(self) -> tuple[Scaling, ...]:
        return tuple(s.scaling for s in self.nodes)

    @property
    def timeout(self) -> float:
        """The watchdog's seconds (see ``feedback_timeout``)."""
        return self.feedback_timeout or max(10.0 / self.rate, 0.1)

    @property
    def wait(self) -> float:
        """Seconds a cycle waits for its feedback (see ``feedback_wait``)."""
        return self.feedback_wait or min(self.timeout / 5, max(2.0 / self.rate, 0.005))

    def with_rated(self, rated: list[float]) -> DriveSettings:
        """The settings with the rated values read from the drives."""
        return replace(self, nodes=tuple(
            replace(s, scaling=replace(s.scaling, rated=float(r)), rated_from_drive=False)
            for s, r in zip(self.nodes, rated, strict=True)))

    @classmethod
    def defaults(cls, robot, *, rate: float = 250.0, output: str | None = None,
                 fd: bool = False, timestamp: bool = True, node_ids=None,
                 increments_per_turn: float | None = None, **limits) -> DriveSettings:
        """Drives at nodes 1…n with the robot's encoders (``increments_per_turn``; else the
        resolution its transmission states, as a hexapod's leg sensors, one increment per
        step; else 2¹⁶ per turn) and zeros, rated values read from the drives, the default PDO
        mapping."""
        n = robot.n
        node_ids = list(range(1, n + 1)) if node_ids is None else list(node_ids)
        if len(node_ids) != n:
            raise DriveConfigError(f"node_ids: expected {n} (one per actuator of "
                                   f"{robot.name!r}), found {len(node_ids)}")
        trans = robot.transmission
        stated = getattr(trans, "resolution", None)   # a sensor's step, e.g. a leg's (m)
        known = trans.increments_per_turn if trans.increments_per_turn is not None else \
            2 * np.pi / stated if stated is not None else 2.0 ** 16
        inc = np.broadcast_to(np.asarray(increments_per_turn or known, dtype=float), (n,))
        zero = np.broadcast_to(np.asarray(0.0 if trans.zero_increments is None else
                                          trans.zero_increments, dtype=float), (n,))
        output = output or ("current" if robot.output == "current" else "torque")
        nodes = [NodeSettings(int(i), Scaling.from_turn(float(k), zero=float(z)),
                              rated_from_drive=True)
                 for i, k, z in zip(node_ids, inc, zero, strict=True)]
        return cls(nodes=tuple(nodes), mapping=PdoMapping.default(output, fd=fd,
                                                                    timestamp=timestamp),
                   rate=rate, **limits)

    @classmethod
    def from_file(cls, path: str | Path, robot) -> DriveSettings:
        """Settings from a drives file (YAML, see the module docstring)."""
        import yaml

        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise DriveConfigError(f"drives file {path}: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("drives"), list):
            raise DriveConfigError(f"drives file {path}: expected a table with a 'drives' list "
                                   "(one entry per actuator), e.g. drives: [{node: 1, "
                                   "increments_per_turn: 4096}]")
        unknown = set(data) - {"rate", "mapping", "drives", "following_error",
                               "feedback_timeout", "sdo_timeout", "feedback_wait"}
        if unknown:
            raise DriveConfigError(f"drives file {path}: unknown keys {sorted(unknown)}")
        if len(data["drives"]) != robot.n:
            raise DriveConfigError(f"drives file {path}: {len(data['drives'])} drives for the "
                                   f"{robot.n} actuators of {robot.name!r} "
                                   f"({', '.join(robot.actuator_names)})")
        nodes = [_node(d, k, path) for k, d in enumerate(data["drives"])]
        mapping = (PdoMapping.from_dict(data["mapping"]) if "mapping" in data else
                   PdoMapping.default("current" if robot.output == "current" else "torque"))
        extra = {k: data[k] for k in ("following_error", "feedback_timeout", "sdo_timeout",
                                      "feedback_wait") if k in data}
        return cls(nodes=tuple(nodes), mapping=mapping, rate=float(data.get("rate", 250.0)),
                   **extra)


def _node(d: object, k: int, path: Path) -> NodeSettings:
    where = f"drives file {path}, drive {k + 1}"
    if not isinstance(d, dict) or "node" not in d:
        raise DriveConfigError(f"{where}: expected a table with at least 'node', found {d!r}")
    unknown = set(d) - {"node", "eds", "increments_per_turn", "resolution", "gear_ratio",
                        "zero", "rated", "gear"}
    if unknown:
        raise DriveConfigError(f"{where}: unknown keys {sorted(unknown)}")
    try:
        if "resolution" in d:
            scaling = Scaling(float(d["resolution"]), zero=float(d.get("zero", 0.0)))
        else:
            scaling = Scaling.from_turn(float(d.get("increments_per_turn", 2 ** 16)),
                                        gear_ratio=float(d.get("gear_ratio", 1.0)),
                                        zero=float(d.get("zero", 0.0)))
        scaling = replace(scaling, rated=float(d.get("rated", 1.0)),
                          gear=float(d.get("gear", 1.0)))
    except (TypeError, ValueError) as exc:
        raise DriveConfigError(f"{where}: {exc}") from None
    eds = d.get("eds")
    eds = None if eds is None else (path.parent / eds if not Path(eds).is_absolute() else
                                    Path(eds))
    return NodeSettings(d["node"], scaling, eds, rated_from_drive="rated" not in d)
