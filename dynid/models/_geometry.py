"""Plane geometry shared by the mechanism terms."""

from __future__ import annotations

import numpy as np


def cosine_law(a: float, b: float, theta: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Length ``l = sqrt(a² + b² − 2ab cos θ)`` of the side opposite the angle ``θ`` between
    sides ``a`` and ``b``, and its first two derivatives in ``θ``::

        l′ = ab sin θ / l,    l″ = (ab cos θ − l′²) / l
    """
    ab = a * b
    c = np.cos(theta)
    length = np.sqrt(a * a + b * b - 2 * ab * c)
    d1 = ab * np.sin(theta) / length
    return length, d1, (ab * c - d1 * d1) / length
