"""Where the velocities and accelerations of a recording come from.

Three sources, each through the same low-pass (when there is one) as the positions:

``"positions"``
    the positions are low-passed and differentiated twice;
``"velocities"``
    recorded velocities (e.g. from the drives) are low-passed like the positions and
    differentiated once for the accelerations; recorded accelerations are not used;
``"recorded"``
    recorded velocities and accelerations are used as they are (low-passed like the positions
    when a cutoff is set).

Positions are differentiated by the estimator ``differentiation`` names
(:mod:`dynid.identify.derivatives`: ``"butterworth"``, ``"savgol"``, ``"rts"``); recorded
velocities always go through the Butterworth low-pass.

``"auto"`` takes, per recording, ``"recorded"`` when it carries velocities and accelerations
(the capture software computed them, usually with its own filter, and filtered the output
alike), ``"velocities"`` when it carries velocities only, else ``"positions"``.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from .derivatives import estimate_states
from .filters import differentiate, lowpass
from .recording import Recording

__all__ = ["DERIVATIVES", "derivative_source", "derive_states"]

#: Settings of ``Processing(derivatives=...)``.
DERIVATIVES = ("auto", "positions", "velocities", "recorded")


def derivative_source(recording: Recording, derivatives: str) -> str:
    """The source (``"positions"``, ``"velocities"`` or ``"recorded"``) that ``derivatives``
    means for ``recording``; raises when the recording lacks the signals it needs."""
    has_v, has_a = recording.velocities is not None, recording.accelerations is not None
    if derivatives == "auto":
        return "recorded" if has_v and has_a else "velocities" if has_v else "positions"
    if (derivatives in ("velocities", "recorded") and not has_v) or \
            (derivatives == "recorded" and not has_a):
        missing = "velocities" if not has_v else "accelerations"
        fallback = "'positions'" if derivatives == "velocities" or not has_v else \
            "'velocities' or 'positions'"
        raise DataError(f"derivatives={derivatives!r}: the recording carries no {missing}; "
                        f"read them with the recording (velocities=..., accelerations=...) "
                        f"or use derivatives={fallback}")
    if derivatives not in DERIVATIVES:
        raise DataError(f"derivatives: expected one of {DERIVATIVES}, found {derivatives!r}")
    return derivatives


def derive_states(recording: Recording, source: str, cutoff: float | None, order: int, *,
                  periodic: bool = False, differentiation: str = "auto"
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities and accelerations (N, n) of ``recording`` from ``source`` (see
    the module docstring), every signal low-passed at ``cutoff`` Hz (zero-phase Butterworth
    of ``order``, :func:`~dynid.identify.filters.lowpass`) when it is not ``None``; from the
    positions, by the estimator ``differentiation``
    (:func:`~dynid.identify.derivatives.estimate_states`)."""
    rate, time = recording.rate, recording.time
    if source == "positions":
        return estimate_states(recording.positions, rate, cutoff, differentiation, order=order,
                               time=time, periodic=periodic)

    def smooth(x: np.ndarray) -> np.ndarray:
        return x if cutoff is None else lowpass(x, rate, cutoff, order, periodic=periodic)

    q = smooth(recording.positions)
    v = smooth(recording.velocities)
    if source == "velocities":
        return q, v, differentiate(v, time, periodic=periodic)
    return q, v, smooth(recording.accelerations)
