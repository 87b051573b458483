"""Object dictionaries of CiA 402 drives: a sensible default, or a drive's own EDS/DCF file.

:func:`cia402_dictionary` builds, for one node ID, the objects a cyclic synchronous position
capture uses: the communication objects of CiA 301 (device type, error register, the high
resolution time stamp 0x1013, heartbeat, SYNC COB-ID, four receive and four transmit PDOs
with their mapping parameters) and those of CiA 402 (controlword, statusword, modes of
operation, position, velocity, torque and current values, target position and offsets, rated
current and torque, following error window, interpolation period, supported modes).
:func:`load_dictionary` reads a drive's EDS or DCF through ``canopen`` and checks that it has
what the mapping needs.
"""

from __future__ import annotations

from pathlib import Path

import canopen
from canopen.objectdictionary import (
    INTEGER8,
    INTEGER16,
    INTEGER32,
    UNSIGNED8,
    UNSIGNED16,
    UNSIGNED32,
    ODRecord,
    ODVariable,
)

from ..errors import DriveConfigError
from .pdo import OBJECTS, PdoMapping

__all__ = ["REQUIRED", "cia402_dictionary", "load_dictionary"]

#: Objects a capture reads or writes besides the mapped ones: index → name.
REQUIRED = {0x6040: "controlword", 0x6041: "statusword", 0x6060: "modes of operation",
            0x6061: "modes of operation display", 0x6064: "position actual value",
            0x607A: "target position"}

_VARIABLES = [
    # index, name, type, access, default, mappable
    (0x1000, "Device type", UNSIGNED32, "ro", 0x00020192, False),  # CiA 402, servo drive
    (0x1001, "Error register", UNSIGNED8, "ro", 0, True),
    (0x1005, "COB-ID SYNC", UNSIGNED32, "rw", 0x80, False),
    (0x1006, "Communication cycle period", UNSIGNED32, "rw", 0, False),
    (0x1013, "High resolution time stamp", UNSIGNED32, "rw", 0, True),
    (0x1017, "Producer heartbeat time", UNSIGNED16, "rw", 0, False),
    (0x603F, "Error code", UNSIGNED16, "ro", 0, True),
    (0x6040, "Controlword", UNSIGNED16, "rw", 0, True),
    (0x6041, "Statusword", UNSIGNED16, "ro", 0, True),
    (0x605A, "Quick stop option code", INTEGER16, "rw", 2, False),
    (0x6060, "Modes of operation", INTEGER8, "rw", 0, True),
    (0x6061, "Modes of operation display", INTEGER8, "ro", 0, True),
    (0x6064, "Position actual value", INTEGER32, "ro", 0, True),
    (0x6065, "Following error window", UNSIGNED32, "rw", 0xFFFFFFFF, False),
    (0x606C, "Velocity actual value", INTEGER32, "ro", 0, True),
    (0x6075, "Motor rated current", UNSIGNED32, "rw", 1000, False),
    (0x6076, "Motor rated torque", UNSIGNED32, "rw", 1000, False),
    (0x6077, "Torque actual value", INTEGER16, "ro", 0, True),
    (0x6078, "Current actual value", INTEGER16, "ro", 0, True),
    (0x607A, "Target position", INTEGER32, "rw", 0, True),
    (0x60B1, "Velocity offset", INTEGER32, "rw", 0, True),
    (0x60B2, "Torque offset", INTEGER16, "rw", 0, True),
    (0x6502, "Supported drive modes", UNSIGNED32, "ro", 0x3FF, False),
]


def _variable(index: int, subindex: int, name: str, data_type: int, access: str,
              default: int, mappable: bool = False) -> ODVariable:
    var = ODVariable(name, index, subindex)
    var.data_type, var.access_type, var.default = data_type, access, default
    var.pdo_mappable = mappable
    return var


def _record(index: int, name: str, members: list[tuple], *, count_writable: bool = False
            ) -> ODRecord:
    record = ODRecord(name, index)
    for sub, member, data_type, default in members:
        access = "rw" if sub or count_writable else "ro"
        record.add_member(_variable(index, sub, member, data_type, access, default))
    return record


def cia402_dictionary(node_id: int) -> canopen.ObjectDictionary:
    """The default object dictionary of a CiA 402 servo drive at ``node_id`` (1–127).

    The PDOs start disabled and unmapped except those of the predefined connection set's
    COB-IDs; a capture maps them (see :class:`~dynid.hardware.pdo.PdoMapping`).
    """
    if not isinstance(node_id, int) or not 1 <= node_id <= 127:
        raise DriveConfigError(f"node ID: expected an integer from 1 to 127, found {node_id!r}")
    od = canopen.ObjectDictionary()
    od.node_id = node_id
    for index, name, data_type, access, default, mappable in _VARIABLES:
        od.add_object(_variable(index, 0, name, data_type, access, default, mappable))
    od.add_object(_record(0x1018, "Identity object", [
        (0, "Highest sub-index supported", UNSIGNED8, 4), (1, "Vendor-ID", UNSIGNED32, 0),
        (2, "Product code", UNSIGNED32, 0), (3, "Revision number", UNSIGNED32, 0),
        (4, "Serial number", UNSIGNED32, 0)]))
    od.add_object(_record(0x60C2, "Interpolation time period", [
        (0, "Highest sub-index supported", UNSIGNED8, 2),
        (1, "Interpolation time period value", UNSIGNED8, 1),
        (2, "Interpolation time index", INTEGER8, -3)]))
    for k in range(4):
        disabled = 0x80000000
        od.add_object(_record(0x1400 + k, f"RPDO{k + 1} communication parameter", [
            (0, "Highest sub-index supported", UNSIGNED8, 2),
            (1, "COB-ID used by RPDO", UNSIGNED32,
             disabled | PdoMapping.rpdo_id(node_id, k)),
            (2, "Transmission type", UNSIGNED8, 1)]))
        od.add_object(_record(0x1600 + k, f"RPDO{k + 1} mapping parameter", [
            (0, "Number of mapped objects", UNSIGNED8, 0)]
            + [(s, f"Mapping entry {s}", UNSIGNED32, 0) for s in range(1, 9)],
            count_writable=True))
        od.add_object(_record(0x1800 + k, f"TPDO{k + 1} communication parameter", [
            (0, "Highest sub-index supported", UNSIGNED8, 5),
            (1, "COB-ID used by TPDO", UNSIGNED32, disabled | PdoMapping.tpdo_id(node_id, k)),
            (2, "Transmission type", UNSIGNED8, 1),
            (3, "Inhibit time", UNSIGNED16, 0),
            (5, "Event timer", UNSIGNED16, 0)]))
        od.add_object(_record(0x1A00 + k, f"TPDO{k + 1} mapping parameter", [
            (0, "Number of mapped objects", UNSIGNED8, 0)]
            + [(s, f"Mapping entry {s}", UNSIGNED32, 0) for s in range(1, 9)],
            count_writable=True))
    return od


def load_dictionary(path: str | Path, node_id: int,
                    mapping: PdoMapping | None = None) -> canopen.ObjectDictionary:
    """A drive's EDS or DCF file, checked for the objects a capture uses (and those of
    ``mapping``)."""
    path = Path(path)
    if not path.is_file():
        raise DriveConfigError(f"object dictionary {path}: no such file; give the drive's EDS "
                               "or DCF file, or none for the default CiA 402 dictionary")
    try:
        od = canopen.import_od(str(path), node_id)
    except Exception as exc:  # canopen raises what its parsers raise
        raise DriveConfigError(f"object dictionary {path}: cannot be read as an EDS or DCF "
                               f"file ({type(exc).__name__}: {exc})") from None
    needed = dict(REQUIRED)
    if mapping is not None:
        needed.update({OBJECTS[o][0]: o for o in mapping.receive + mapping.transmit})
    missing = [f"0x{i:04X} {name}" for i, name in needed.items() if i not in od]
    if missing:
        raise DriveConfigError(f"object dictionary {path}: missing {', '.join(missing)}, which "
                               "a cyclic synchronous position capture needs")
    return od
