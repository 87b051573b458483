"""The drive interface a capture talks to, and the registry of its implementations.

A :class:`Drives` object is the group of drives that move one robot, exchanged cyclically: each
cycle the host sends every drive its target and reads back what the drives measured at the
same instant. Implementations convert units at this edge only: the capture sees SI actuator
coordinates (rad or m) and outputs (A, N·m or N), the bus sees increments and thousandths of
rated values.

Implementations register by name in :data:`DRIVE_PROTOCOLS`, the way python-can keeps its bus
interfaces, and :func:`open_drives` builds one from its name::

    drives = open_drives("cia402", robot, settings)
    with drives:
        drives.enable()
        sample = drives.exchange(targets)
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..errors import DriveConfigError

__all__ = ["DRIVE_PROTOCOLS", "Drives", "Feedback", "open_drives"]


@dataclass(frozen=True)
class Feedback:
    """What the drives measured in one cycle (SI units).

    Attributes
    ----------
    cycle
        Index of the cycle (0 for the first after enabling).
    time
        Seconds since the first cycle: the drives' own time stamps when the mapping has them,
        else the host's.
    positions, output
        Actuator positions (rad or m) and measured outputs (A, N·m or N), (n,).
    host_time
        The host's clock (``time.perf_counter``) when the cycle was sent.
    """

    cycle: int
    time: float
    positions: np.ndarray
    output: np.ndarray
    host_time: float


class Drives(ABC):
    """The drives of one robot, exchanged cyclically at :attr:`rate`.

    The life cycle: :meth:`open` (connect and configure, nothing moves), :meth:`enable`
    (hold the present position, power on), :meth:`exchange` once per cycle, then
    :meth:`disable` or :meth:`quick_stop`, :meth:`close`. Used as a context manager, leaving the
    block stops and disables the drives, whatever happened inside it.
    """

    #: Number of drives (the robot's actuators, in its order).
    n: int
    #: Cycle rate, Hz.
    rate: float
    #: ``"current"`` or ``"torque"``: what the drives report as their output.
    output: str

    @abstractmethod
    def open(self) -> None:
        """Connect and configure every drive; no motion, no power to the motors."""

    @abstractmethod
    def positions(self) -> np.ndarray:
        """The actuator positions now (n,), read without enabling the drives."""

    @abstractmethod
    def enable(self, hold: np.ndarray, feedforward: np.ndarray | None = None) -> None:
        """Power the drives holding the positions ``hold`` (n,) (the present ones), with the
        output feed-forward that holds them there (n,) where the mapping carries it."""

    def limit_following_error(self, limits: np.ndarray) -> None:
        """Give the drives their own following-error limit (n,), in SI units, where the
        protocol has one: a backstop behind the capture's own check. Default: nothing."""
        return None

    @abstractmethod
    def exchange(self, targets: np.ndarray, feedforward: np.ndarray | None = None
                 ) -> Feedback | None:
        """Send the targets (n,) of this cycle (and the output feed-forward (n,), where the
        mapping carries it), trigger it and return what the drives measured, or ``None`` when
        the feedback of this cycle did not come in time (a dropped cycle).

        Raises :class:`~dynid.errors.CaptureTimeoutError` when no feedback came for the
        watchdog's time, :class:`~dynid.errors.DriveFaultError` on a drive fault or an
        emergency message, :class:`~dynid.errors.BusError` when the interface fails.
        """

    @abstractmethod
    def quick_stop(self) -> None:
        """Stop every axis with the drives' quick-stop deceleration, then remove power.
        Never raises: every drive is tried even if others fail; failures are logged in
        :attr:`stop_errors`."""

    @abstractmethod
    def disable(self) -> None:
        """Remove power from the drives at rest."""

    @abstractmethod
    def close(self) -> None:
        """Release the bus."""

    stop_errors: list[str]

    def __enter__(self) -> Drives:
        self.open()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is not None:
                self.quick_stop()
            else:
                self.disable()
        finally:
            self.close()


#: Drive protocols by name: ``"module:Class"`` loaded on first use.
DRIVE_PROTOCOLS: dict[str, str] = {
    "cia402": "dynid.hardware.cia402:CiA402Drives",
}


def open_drives(protocol: str, *args, **kwargs) -> Drives:
    """A :class:`Drives` implementation by protocol name (see :data:`DRIVE_PROTOCOLS`),
    constructed with the remaining arguments (not yet opened)."""
    if protocol not in DRIVE_PROTOCOLS:
        raise DriveConfigError(f"drive protocol {protocol!r}: expected one of "
                               f"{sorted(DRIVE_PROTOCOLS)}")
    module, name = DRIVE_PROTOCOLS[protocol].split(":")
    return getattr(importlib.import_module(module), name)(*args, **kwargs)
