"""Whether two recordings follow the same trajectory (the payload method compares two runs of
one trajectory)."""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from .recording import Recording

__all__ = ["check_same_motion"]


def check_same_motion(first: Recording, second: Recording, tolerance: float, *,
                      labels: tuple[str, str] = ("empty", "loaded")) -> np.ndarray:
    """Per coordinate, the RMS difference of the two recordings' positions over the time
    they share (times counted from each one's first sample, ``second`` interpolated at
    ``first``'s), as a fraction of the coordinate's range of motion in ``first``.

    Raises :class:`~dynid.errors.DataError` naming what differs when the coordinates differ,
    the durations differ by more than ``tolerance`` of the first's, or a fraction exceeds
    ``tolerance``."""
    a, b = labels
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise DataError(f"trajectory_tolerance: expected a fraction > 0 (0.1: 10 % of each "
                        f"coordinate's range of motion), found {tolerance!r}")
    if first.space != second.space or tuple(first.names) != tuple(second.names):
        raise DataError(f"{b}: its coordinates ({second.space}: {', '.join(second.names)}) "
                        f"are not those of {a} ({first.space}: {', '.join(first.names)}); "
                        "record both runs on the same drives")
    t1, t2 = first.time - first.time[0], second.time - second.time[0]
    if abs(t1[-1] - t2[-1]) > tolerance * t1[-1]:
        raise DataError(f"{b}: it lasts {t2[-1]:.4g} s and {a} {t1[-1]:.4g} s; the payload "
                        "method compares two runs of the same trajectory: record both with "
                        "the same trajectory file and duration")
    shared = t1 <= t2[-1]
    q2 = np.column_stack([np.interp(t1[shared], t2, second.positions[:, j])
                          for j in range(second.n)])
    q1 = first.positions[shared]
    spread = np.ptp(first.positions, axis=0)
    rms = np.sqrt(np.mean((q2 - q1) ** 2, axis=0))
    fraction = rms / np.where(spread > 0, spread, np.inf)
    fraction[(spread == 0) & (rms > 0)] = np.inf
    worst = int(np.argmax(fraction))
    if fraction[worst] > tolerance:
        unit = first.units["positions"][worst]
        raise DataError(f"{b}: {first.names[worst]} follows another trajectory than in {a} "
                        f"(RMS difference {rms[worst]:.3g} {unit}, {100 * fraction[worst]:.3g} "
                        f"% of its range of motion {spread[worst]:.3g} {unit}; tolerance "
                        f"{100 * tolerance:g} %). Record both runs with the same trajectory "
                        "file, started from the same position; raise trajectory_tolerance "
                        "only if the difference is the payload's effect on the tracking")
    return fraction
