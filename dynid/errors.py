"""Errors raised by dynid.

Every error dynid raises on purpose derives from :class:`DynidError`. The subclasses
also inherit the matching built-in exception, so ``except ValueError`` keeps working::

    Exception
    └── DynidError
        ├── ModelError(ValueError)        robot descriptions, robot files, parameter sets
        ├── DataError(ValueError)         recordings, signals, array shapes and values
        ├── TrajectoryError(ValueError)   excitation trajectories and their limits
        ├── SolverError(RuntimeError)     optimizers and estimators that fail or are infeasible
        └── HardwareError(RuntimeError)   drives, buses, capture
            ├── BusBudgetError(ValueError)         a cycle the bus cannot carry
            ├── DriveConfigError(ValueError)       node settings, object dictionaries, mappings
            └── CaptureError                       a capture stopped; the motion was stopped
                ├── CaptureTimeoutError(TimeoutError)  feedback missing, a drive not answering
                ├── DriveFaultError                    a drive fault or an emergency message
                ├── FollowingError                     position error beyond its limit
                └── BusError                           the CAN interface reported an error

    UserWarning
    └── DynidWarning                      results that are usable but need attention

Messages name the input, what was expected and what was found, and say how to fix it.
"""

from __future__ import annotations

__all__ = [
    "BusBudgetError",
    "BusError",
    "CaptureError",
    "CaptureTimeoutError",
    "DataError",
    "DriveConfigError",
    "DriveFaultError",
    "DynidError",
    "DynidWarning",
    "FollowingError",
    "HardwareError",
    "ModelError",
    "SolverError",
    "TrajectoryError",
]


class DynidError(Exception):
    """Base class of every error dynid raises on purpose."""


class ModelError(DynidError, ValueError):
    """A robot description, robot file or parameter set is invalid."""


class DataError(DynidError, ValueError):
    """Input arrays or recordings have the wrong shape, units or values."""


class TrajectoryError(DynidError, ValueError):
    """An excitation trajectory or its constraints cannot be satisfied."""


class SolverError(DynidError, RuntimeError):
    """An optimizer or estimator failed, or its problem is infeasible."""


class HardwareError(DynidError, RuntimeError):
    """A drive, bus or capture failed."""


class BusBudgetError(HardwareError, ValueError):
    """The bus cannot carry the frames of the chosen cycle at its bitrate."""


class DriveConfigError(HardwareError, ValueError):
    """Bus or node settings, an object dictionary or a PDO mapping is invalid."""


class CaptureError(HardwareError):
    """A capture stopped before its end; the drives were stopped.

    ``path`` is the recording file (every sample flushed before the stop is in it) and
    ``samples`` the number of samples it holds; both are ``None`` when nothing was recorded.
    """

    def __init__(self, message: str, *, path=None, samples: int | None = None):
        super().__init__(message)
        self.path = path
        self.samples = samples


class CaptureTimeoutError(CaptureError, TimeoutError):
    """A drive did not answer in time (missing feedback, a state change not confirmed)."""


class DriveFaultError(CaptureError):
    """A drive reported a fault or sent an emergency message."""


class FollowingError(CaptureError):
    """A position error exceeded its limit."""


class BusError(CaptureError):
    """The CAN interface reported an error (bus off, a failed send or receive)."""


class DynidWarning(UserWarning):
    """A result is usable but needs attention (an inaccurate solve, a saturated signal)."""
