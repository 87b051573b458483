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
            └── CaptureTimeoutError(TimeoutError)

    UserWarning
    └── DynidWarning                      results that are usable but need attention

Messages name the input, what was expected and what was found, and say how to fix it.
"""

from __future__ import annotations

__all__ = [
    "CaptureTimeoutError",
    "DataError",
    "DynidError",
    "DynidWarning",
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


class CaptureTimeoutError(HardwareError, TimeoutError):
    """A drive did not answer in time."""


class DynidWarning(UserWarning):
    """A result is usable but needs attention (an inaccurate solve, a saturated signal)."""
