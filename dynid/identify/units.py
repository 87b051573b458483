"""Units of recorded signals and their conversion to SI.

Recordings are converted to SI units when they are read or built, so that the rest of dynid
sees rad, m, s, A and N·m only. Each unit belongs to a family; a velocity must be in the same
family as its position (deg and deg/s, mm and mm/s), and the output unit must match what the
output is (A for current, N·m or N for torque). An effort's unit pairs with its coordinate's so
that effort times velocity is a power: N·m with an angle, N with a length (a prismatic joint).
"""

from __future__ import annotations

import math

from ..errors import DataError

__all__ = ["EFFORT", "convert_factor", "family", "si_unit"]

#: The SI unit of the effort that does work on a coordinate in each position unit (power in W).
EFFORT = {"rad": "N·m", "m": "N"}

_DEG = math.pi / 180.0
# unit → (quantity, family, factor to SI)
_UNITS = {
    "s": ("time", "time", 1.0), "ms": ("time", "time", 1e-3), "us": ("time", "time", 1e-6),
    "ns": ("time", "time", 1e-9),
    "rad": ("position", "angle", 1.0), "mrad": ("position", "angle", 1e-3),
    "deg": ("position", "angle", _DEG), "m": ("position", "length", 1.0),
    "cm": ("position", "length", 1e-2), "mm": ("position", "length", 1e-3),
    "um": ("position", "length", 1e-6),
    "rad/s": ("velocity", "angle", 1.0), "deg/s": ("velocity", "angle", _DEG),
    "m/s": ("velocity", "length", 1.0), "cm/s": ("velocity", "length", 1e-2),
    "mm/s": ("velocity", "length", 1e-3), "um/s": ("velocity", "length", 1e-6),
    "rad/s²": ("acceleration", "angle", 1.0), "deg/s²": ("acceleration", "angle", _DEG),
    "m/s²": ("acceleration", "length", 1.0), "cm/s²": ("acceleration", "length", 1e-2),
    "mm/s²": ("acceleration", "length", 1e-3), "um/s²": ("acceleration", "length", 1e-6),
    "A": ("output", "current", 1.0), "mA": ("output", "current", 1e-3),
    "N·m": ("output", "torque", 1.0), "mN·m": ("output", "torque", 1e-3),
    "N·mm": ("output", "torque", 1e-3),
    "N": ("output", "force", 1.0), "mN": ("output", "force", 1e-3),
    "kN": ("output", "force", 1e3),
}
_ALIASES = {"Nm": "N·m", "N.m": "N·m", "N*m": "N·m", "mNm": "mN·m", "mN.m": "mN·m",
            "Nmm": "N·mm", "N.mm": "N·mm", "rad/s^2": "rad/s²",
            "deg/s^2": "deg/s²", "m/s^2": "m/s²", "mm/s^2": "mm/s²", "rad/s2": "rad/s²",
            "deg/s2": "deg/s²", "m/s2": "m/s²", "mm/s2": "mm/s²", "cm/s^2": "cm/s²",
            "cm/s2": "cm/s²", "um/s^2": "um/s²", "um/s2": "um/s²", "µs": "us", "sec": "s",
            "µm": "um", "µm/s": "um/s", "µm/s²": "um/s²"}
_SI = {("time", "time"): "s", ("position", "angle"): "rad", ("position", "length"): "m",
       ("velocity", "angle"): "rad/s", ("velocity", "length"): "m/s",
       ("acceleration", "angle"): "rad/s²", ("acceleration", "length"): "m/s²",
       ("output", "current"): "A", ("output", "torque"): "N·m", ("output", "force"): "N"}


def _lookup(unit: str, quantity: str, what: str) -> tuple[str, str, float]:
    if not isinstance(unit, str):
        raise DataError(f"{what}: expected a {quantity} unit (text), found {unit!r:.60}")
    name = _ALIASES.get(unit, unit)
    if name not in _UNITS or _UNITS[name][0] != quantity:
        known = sorted(u for u, (qty, _, _) in _UNITS.items() if qty == quantity)
        raise DataError(f"{what}: unknown {quantity} unit {unit!r}; expected one of {known}")
    return _UNITS[name]


def convert_factor(unit: str, quantity: str, what: str) -> float:
    """Factor that converts values in ``unit`` to SI (raises naming ``what`` when unknown)."""
    return _lookup(unit, quantity, what)[2]


def family(unit: str, quantity: str, what: str) -> str:
    """Family of a unit: ``angle``, ``length``, ``current``, ``torque``, ``force`` or ``time``."""
    return _lookup(unit, quantity, what)[1]


def si_unit(unit: str, quantity: str, what: str) -> str:
    """The SI unit of the family of ``unit`` (``deg/s`` → ``rad/s``)."""
    _, fam, _ = _lookup(unit, quantity, what)
    return _SI[(quantity, fam)]
