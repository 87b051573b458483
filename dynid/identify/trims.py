"""Trims: samples dropped at the start and at the end of a recording file.

A :class:`Trim` gives each end in samples (a whole number) or in seconds (text ending in
``s``). It is written ``START[:END]`` on the command line and accepted in that form by the
readers: ``"500"`` (500 samples at the start), ``"500:20"``, ``"2.5s:1s"``, ``"0:0.5s"``.
Seconds are converted to whole samples at the recording's sample rate, rounded to the nearest.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .._files import excerpt
from ..errors import DataError

__all__ = ["Trim", "trim_of"]

_SECONDS = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*s\s*$")
_SAMPLES = re.compile(r"^\s*([0-9]+)\s*$")
_EXAMPLE = "e.g. Trim(500, 20) (samples), Trim('2.5s', '1s') (seconds) or '500:20'"


def _end(value: object, which: str) -> int | str:
    """One end of a trim: a whole number of samples, or seconds as text ``"2.5s"``."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= 0:
        return int(value)
    if isinstance(value, str):
        m = _SAMPLES.match(value)
        if m:
            return int(m.group(1))
        m = _SECONDS.match(value)
        if m and math.isfinite(float(m.group(1))):
            return f"{float(m.group(1)):g}s"
    raise DataError(f"trim {which}: expected a whole number of samples ≥ 0 or seconds as text "
                    f"ending in 's', found {excerpt(value)}; {_EXAMPLE}")


@dataclass(frozen=True)
class Trim:
    """Samples dropped at the start and at the end of a recording file.

    Parameters
    ----------
    start, end
        A whole number of samples (``500``), or seconds as text (``"2.5s"``).

    Examples
    --------
    >>> Trim(500)                     # the first 500 samples
    Trim('500:0')
    >>> Trim("2.5s", "1s").samples(200.0)
    (500, 200)
    >>> Trim.parse("500:20") == Trim(500, 20)
    True
    """

    start: int | str = 0
    end: int | str = 0

    def __post_init__(self) -> None:
        for which in ("start", "end"):
            object.__setattr__(self, which, _end(getattr(self, which), which))

    @classmethod
    def parse(cls, text: str) -> Trim:
        """A trim written ``START[:END]``: ``"500"``, ``"500:20"``, ``"2.5s:1s"``."""
        if not isinstance(text, str):
            raise DataError(f"trim: expected START[:END] as text, found {excerpt(text)}; "
                            f"{_EXAMPLE}")
        parts = text.split(":")
        if len(parts) > 2 or not parts[0].strip():
            raise DataError(f"trim {excerpt(text)}: expected START[:END] (samples, or seconds "
                            f"ending in 's'); {_EXAMPLE}")
        return cls(parts[0].strip(), parts[1].strip() if len(parts) == 2 else 0)

    @property
    def in_seconds(self) -> bool:
        """Whether an end is given in seconds (it needs the sample rate)."""
        return isinstance(self.start, str) or isinstance(self.end, str)

    def samples(self, rate: float | None) -> tuple[int, int]:
        """Samples dropped at the start and at the end; seconds need the ``rate`` (Hz)."""
        out = []
        for value in (self.start, self.end):
            if isinstance(value, str):
                if rate is None:
                    raise DataError(f"trim {self}: seconds need the sample rate; give the time "
                                    "column or rate=, or trim in samples")
                count = float(value[:-1]) * rate
                if not count < 2 ** 62:
                    raise DataError(f"trim {self}: {value} is {count:.3g} samples at {rate:g} "
                                    "Hz, more than any recording holds")
                out.append(round(count))
            else:
                out.append(value)
        return out[0], out[1]

    def __bool__(self) -> bool:
        return self.start not in (0, "0s") or self.end not in (0, "0s")

    def __str__(self) -> str:
        return f"{self.start}:{self.end}"

    def __repr__(self) -> str:
        return f"Trim({str(self)!r})"


def trim_of(value: object) -> Trim:
    """A :class:`Trim` from a trim, its text ``START[:END]``, a whole number of samples at
    the start, or a pair ``(start, end)``."""
    if value is None:
        return Trim()
    if isinstance(value, Trim):
        return value
    if isinstance(value, str):
        return Trim.parse(value)
    if isinstance(value, tuple | list) and len(value) == 2:
        return Trim(value[0], value[1])
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return Trim(value)
    raise DataError(f"trim: expected a Trim, 'START[:END]' or (start, end), found "
                    f"{excerpt(value)}; {_EXAMPLE}")
