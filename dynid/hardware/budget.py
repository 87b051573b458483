"""Bus budget of a cyclic exchange: worst-case frame times on classic CAN and CAN FD.

A capture sends, every control period, an optional SYNC and each drive's receive PDOs
(host → drive) and transmit PDOs (drive → host). Before anything moves it checks that the bus
can carry that cycle at the chosen rate, counting every frame at its longest: all stuff bits
the standard allows, and the interframe space. The check needs no bus::

    >>> from dynid.hardware.budget import BusTiming, Cycle, check_budget
    >>> cycle = Cycle(drives=6, rpdo_bytes=(8,), tpdo_bytes=(8,))
    >>> load = check_budget(cycle, BusTiming(bitrate=1e6), rate=500)
    >>> load.bits, load.load
    (1675, 0.8375)

The default limit, :data:`MAX_LOAD` = 90 %, keeps a tenth of the bus for the traffic a cycle
does not plan: emergency messages of a drive in fault, SDO requests and answers (reading a
state, changing a setting), and the retransmission of a frame destroyed by an error frame (up
to 31 bits of error flags and delimiter plus the frame again).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from numbers import Integral

from .._files import excerpt
from .._validate import is_number
from ..errors import BusBudgetError
from .canframe import (
    FD_LENGTHS,
    BusTiming,
    bitrate_text,
    check_flags,
    check_positive,
    check_type,
    frame_bits,
    payload_length,
)

__all__ = ["FD_LENGTHS", "MAX_LOAD", "BusLoad", "BusTiming", "Cycle", "bus_load",
           "check_budget", "cycle_time", "frame_bits", "max_rate"]

#: Default largest fraction of the bus time a cycle may use (see the module docstring).
MAX_LOAD = 0.9
#: Data bitrates of CAN FD proposed when a cycle does not fit, bit/s.
FD_DATA_BITRATES = (2e6, 5e6)
#: Most PDOs of one direction a CANopen node can have (CiA 301).
MAX_PDOS = 512


@dataclass(frozen=True)
class Cycle:
    """The frames of one control period: a SYNC, then each drive's PDOs.

    Parameters
    ----------
    drives : int
        Number of drives (CANopen nodes, 1–127), all with the same mapping.
    rpdo_bytes : tuple of int
        Payload of each receive PDO of one drive (host → drive), bytes; ``()`` for none.
    tpdo_bytes : tuple of int
        Payload of each transmit PDO of one drive (drive → host), bytes.
    sync : bool
        A SYNC frame opens the cycle (sent in the same frame format as the PDOs).
    sync_counter : bool
        The SYNC carries a 1-byte counter (CiA 301); otherwise it has no data.

    Examples
    --------
    >>> Cycle(drives=6, rpdo_bytes=(8,), tpdo_bytes=(8, 2)).describe()
    '6 drives × (1 RPDO of 8 bytes + 1 TPDO of 8 bytes + 1 TPDO of 2 bytes) + SYNC'
    """

    drives: int
    rpdo_bytes: tuple[int, ...]
    tpdo_bytes: tuple[int, ...]
    sync: bool = True
    sync_counter: bool = False

    def __post_init__(self):
        example = "e.g. Cycle(drives=6, rpdo_bytes=(8,), tpdo_bytes=(8, 4))"
        d = self.drives
        if isinstance(d, bool) or not isinstance(d, Integral) or not 1 <= d <= 127:
            raise BusBudgetError(f"drives: expected a whole number from 1 to 127 (CANopen node "
                                 f"identifiers), found {excerpt(d)}; {example}")
        for name in ("rpdo_bytes", "tpdo_bytes"):
            value = getattr(self, name)
            if not isinstance(value, tuple | list):
                raise BusBudgetError(f"{name}: expected a tuple of payload sizes in bytes, one "
                                     f"per PDO, found {excerpt(value)}; {example}")
            if len(value) > MAX_PDOS:
                raise BusBudgetError(f"{name}: a CANopen node has at most {MAX_PDOS} PDOs of "
                                     f"each direction, found {len(value)}; {example}")
            object.__setattr__(self, name, tuple(value))
        check_flags(self, ("sync", "sync_counter"), example)
        if self.sync_counter and not self.sync:
            raise BusBudgetError("sync_counter=True needs sync=True: the counter travels in the "
                                 "SYNC frame")
        if not (self.sync or self.rpdo_bytes or self.tpdo_bytes):
            raise BusBudgetError(f"the cycle sends no frame: no SYNC and no PDO; {example}")

    def frames(self, timing: BusTiming) -> tuple[int, ...]:
        """Payload of every frame of one cycle, bytes (validated against ``timing``)."""
        one = [payload_length(b, timing, f"rpdo_bytes[{i}]")
               for i, b in enumerate(self.rpdo_bytes)]
        one += [payload_length(b, timing, f"tpdo_bytes[{i}]")
                for i, b in enumerate(self.tpdo_bytes)]
        return (int(self.sync_counter),) * self.sync + tuple(one) * self.drives

    def packed(self, max_payload: int) -> Cycle:
        """The same bytes with each direction's PDOs merged into as few frames of at most
        ``max_payload`` bytes as first-fit decreasing finds, every PDO kept whole."""
        def pack(sizes):
            frames: list[int] = []
            for size in sorted(sizes, reverse=True):
                fit = next((i for i, f in enumerate(frames) if f + size <= max_payload), None)
                if fit is None:
                    frames.append(size)
                else:
                    frames[fit] += size
            return tuple(frames)
        return Cycle(self.drives, pack(self.rpdo_bytes), pack(self.tpdo_bytes), self.sync,
                     self.sync_counter)

    def describe(self) -> str:
        """The cycle in words, e.g. ``'7 drives × (1 RPDO of 4 bytes + 1 TPDO of 8 bytes)'``."""
        parts = [f"{k} {kind}{'s' * (k > 1)} of {size} byte{'s' * (size != 1)}"
                 for kind, sizes in (("RPDO", self.rpdo_bytes), ("TPDO", self.tpdo_bytes))
                 for size, k in Counter(sizes).items()]
        text = (f"{self.drives} drive{'s' * (self.drives > 1)} × ({' + '.join(parts)})"
                if parts else "")
        sync = "SYNC with counter" if self.sync_counter else "SYNC" * self.sync
        return " + ".join(t for t in (text, sync) if t)


def cycle_time(cycle: Cycle, timing: BusTiming) -> float:
    """Worst-case bus time of one cycle, seconds (every frame at its longest, see
    :func:`frame_bits`).

    >>> cycle_time(Cycle(drives=1, rpdo_bytes=(), tpdo_bytes=(8,)), BusTiming(bitrate=1e6))
    0.00019
    """
    check_type(cycle, Cycle, "cycle", "Cycle(drives=6, rpdo_bytes=(8,), tpdo_bytes=(8,))")
    check_type(timing, BusTiming, "timing", "BusTiming(bitrate=1e6)")
    nominal, data = _cycle_bits(cycle, timing)
    return nominal / timing.bitrate + (data / timing.data_bitrate if data else 0.0)


def _cycle_bits(cycle: Cycle, timing: BusTiming) -> tuple[int, int]:
    bits = [frame_bits(b, timing) for b in cycle.frames(timing)]
    return sum(b[0] for b in bits), sum(b[1] for b in bits)


def bus_load(cycle: Cycle, timing: BusTiming, rate: float) -> float:
    """Fraction of the bus time the cycle uses at ``rate`` cycles per second (may exceed 1).

    >>> bus_load(Cycle(drives=7, rpdo_bytes=(4,), tpdo_bytes=(8,)), BusTiming(), 1000)
    1.665
    """
    return cycle_time(cycle, timing) * check_positive(rate, "rate", "e.g. rate=1000.0 (Hz)")


def max_rate(cycle: Cycle, timing: BusTiming, max_load: float = MAX_LOAD) -> float:
    """Highest cycle rate, Hz, at which the cycle uses at most ``max_load`` of the bus.

    >>> round(max_rate(Cycle(drives=7, rpdo_bytes=(8,), tpdo_bytes=(8,)), BusTiming()), 1)
    462.7
    """
    return _limit(max_load) / cycle_time(cycle, timing)


def _limit(max_load) -> float:
    if not is_number(max_load) or not 0 < max_load <= 1:
        raise BusBudgetError(f"max_load: expected a fraction of the bus time in (0, 1], found "
                             f"{excerpt(max_load)}; e.g. max_load=0.9 (90 %)")
    return float(max_load)


@dataclass(frozen=True)
class BusLoad:
    """The bus budget of a cycle that fits (:func:`check_budget`).

    ``load`` is the fraction of the bus time used, ``bits`` the worst-case bits of one cycle
    (both phases of CAN FD frames), ``cycle_time`` their duration in seconds, ``frames`` the
    frames per cycle, ``rate`` the cycle rate in Hz and ``max_load`` the limit.
    """

    load: float
    bits: int
    cycle_time: float
    frames: int
    rate: float
    max_load: float

    @property
    def margin(self) -> float:
        """Fraction of the bus time left below the limit, ``max_load − load``."""
        return self.max_load - self.load

    @property
    def max_rate(self) -> float:
        """Highest cycle rate within the limit, Hz."""
        return self.max_load / self.cycle_time

    def summary(self) -> str:
        """One line: frames, bits, time per cycle, load, limit and margin."""
        return (f"{self.frames} frames, {self.bits} worst-case bits, "
                f"{self.cycle_time * 1e6:.4g} µs per cycle: {_pct(self.load)} of the bus at "
                f"{self.rate:g} Hz (limit {_pct(self.max_load)}, margin {_pct(self.margin)})")


def check_budget(cycle: Cycle, timing: BusTiming, rate: float, *,
                 max_load: float = MAX_LOAD) -> BusLoad:
    """The bus load of ``cycle`` at ``rate`` Hz; raises when it exceeds ``max_load``.

    Raises
    ------
    BusBudgetError
        The cycle needs more than ``max_load`` of the bus: the message gives the load and
        what would fit, each computed: the highest rate with this mapping, the rate with each
        drive's PDOs packed into fewer frames, and CAN FD with a 2 or 5 Mbit/s data phase.
        Also for invalid arguments.

    Examples
    --------
    >>> cycle = Cycle(drives=7, rpdo_bytes=(8,), tpdo_bytes=(8,))
    >>> check_budget(cycle, BusTiming(fd=True, data_bitrate=5e6), 1000).frames
    15
    """
    limit = _limit(max_load)
    seconds = cycle_time(cycle, timing)
    load = bus_load(cycle, timing, rate)
    if load > limit:
        raise BusBudgetError(_refusal(cycle, timing, float(rate), load, limit))
    return BusLoad(load, sum(_cycle_bits(cycle, timing)), seconds, len(cycle.frames(timing)),
                   float(rate), limit)


def _refusal(cycle: Cycle, timing: BusTiming, rate: float, load: float, limit: float) -> str:
    data = (f" (data phases counted at {bitrate_text(timing.data_bitrate)})" if timing.data_bitrate
            else "")
    lines = [f"{cycle.describe()} at {rate:g} Hz need {bitrate_text(load * timing.bitrate)} of "
             f"worst-case bus time{data}, {_pct(load)} of {timing.describe()} "
             f"(limit {_pct(limit)}). What would fit:",
             f"- this mapping: up to {_fitting(cycle, timing, limit)} Hz"]
    packed = cycle.packed(timing.max_payload)
    if cycle_time(packed, timing) < cycle_time(cycle, timing):
        lines.append(_option(packed, timing, rate, limit,
                             f"each drive's PDOs packed into fewer frames, {packed.describe()}"))
    for speed in FD_DATA_BITRATES:
        if speed <= timing.bitrate or (timing.data_bitrate or 0) >= speed:
            continue
        fd = BusTiming(timing.bitrate, True, speed, timing.extended_ids)
        best = min((cycle, cycle.packed(fd.max_payload)), key=lambda c: cycle_time(c, fd))
        how = "" if best == cycle else f" with the PDOs packed, {best.describe()}"
        lines.append(_option(best, fd, rate, limit, f"{fd.describe()}{how}", f" (BusTiming("
                             f"bitrate={_literal(fd.bitrate)}, fd=True, data_bitrate="
                             f"{_literal(speed)}{', extended_ids=True' * fd.extended_ids}))"))
    return "\n".join(lines)


def _option(cycle: Cycle, timing: BusTiming, rate: float, limit: float, what: str,
            call: str = "") -> str:
    load = bus_load(cycle, timing, rate)
    verdict = "fits" if load <= limit else "too much"
    return (f"- {what}: {_pct(load)} at {rate:g} Hz, {verdict}; up to "
            f"{_fitting(cycle, timing, limit)} Hz{call}")


def _literal(x: float) -> str:
    return f"{x:g}".replace("e+0", "e").replace("e+", "e")


def _fitting(cycle: Cycle, timing: BusTiming, limit: float) -> str:
    """The highest rate of three significant digits at which the cycle fits, as written."""
    seconds = cycle_time(cycle, timing)
    top = limit / seconds
    if not top >= 1e-300:
        return f"{top:.3g}"
    step = 10.0 ** (math.floor(math.log10(top)) - 2)
    rate = math.floor(top / step) * step
    while float(f"{rate:g}") * seconds > limit:  # the rate as written must fit
        rate -= step
    return f"{rate:g}"


def _pct(x: float) -> str:
    return f"{round(100 * x, 1):g} %"
