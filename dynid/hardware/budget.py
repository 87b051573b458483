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
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from numbers import Integral

from .._files import excerpt
from .._validate import is_number
from ..errors import BusBudgetError

__all__ = ["FD_LENGTHS", "MAX_LOAD", "BusLoad", "BusTiming", "Cycle", "bus_load",
           "check_budget", "cycle_time", "frame_bits", "max_rate"]

#: Payload lengths a CAN FD frame can carry, bytes; other lengths are padded to the next one.
FD_LENGTHS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)
#: Default largest fraction of the bus time a cycle may use (see the module docstring).
MAX_LOAD = 0.9
#: Data bitrates of CAN FD proposed when a cycle does not fit, bit/s.
FD_DATA_BITRATES = (2e6, 5e6)
#: Nominal bitrates of CiA 301's bit timing table span 10 kbit/s to 1 Mbit/s (ISO 11898's top).
NOMINAL_BITRATES = (10e3, 1e6)
#: Fastest data phase accepted, bit/s (CAN FD transceivers run theirs at 2 to 8 Mbit/s).
MAX_DATA_BITRATE = 20e6
#: Most PDOs of one direction a CANopen node can have (CiA 301).
MAX_PDOS = 512
_EXAMPLE = "e.g. BusTiming(bitrate=1e6) or BusTiming(bitrate=1e6, fd=True, data_bitrate=5e6)"


def _positive(value, name: str, example: str) -> float:
    if not is_number(value) or not value > 0:
        raise BusBudgetError(f"{name}: expected a positive finite number, found "
                             f"{excerpt(value)}; {example}")
    return float(value)


def _flags(owner: object, names: tuple[str, ...], example: str) -> None:
    for name in names:
        if not isinstance(getattr(owner, name), bool):
            raise BusBudgetError(f"{name}: expected True or False, found "
                                 f"{excerpt(getattr(owner, name))}; {example}")


def _is(value: object, kind: type, name: str, example: str) -> None:
    if not isinstance(value, kind):
        raise BusBudgetError(f"{name}: expected a {kind.__name__}, found {excerpt(value)}; "
                             f"e.g. {example}")


@dataclass(frozen=True)
class BusTiming:
    """Bit timing of a CAN bus.

    Parameters
    ----------
    bitrate : float
        Nominal bitrate (the arbitration phase), bit/s.
    fd : bool
        CAN FD frames (payloads up to 64 bytes) instead of classic CAN (up to 8).
    data_bitrate : float, optional
        Bitrate of the data phase of CAN FD frames (bit-rate switching), bit/s; ``None``
        sends the whole frame at ``bitrate``.
    extended_ids : bool
        29-bit identifiers instead of 11-bit ones.

    Examples
    --------
    >>> BusTiming(bitrate=1e6, fd=True, data_bitrate=5e6).describe()
    'CAN FD at 1 Mbit/s, data phase 5 Mbit/s'
    """

    bitrate: float = 1e6
    fd: bool = False
    data_bitrate: float | None = None
    extended_ids: bool = False

    def __post_init__(self):
        low, high = NOMINAL_BITRATES
        if _positive(self.bitrate, "bitrate", _EXAMPLE) < low or self.bitrate > high:
            raise BusBudgetError(f"bitrate: expected a nominal bitrate from {_bits(low)} to "
                                 f"{_bits(high)} in bit/s, found {self.bitrate:g}; {_EXAMPLE} "
                                 "(a faster data phase is data_bitrate)")
        _flags(self, ("fd", "extended_ids"), _EXAMPLE)
        if self.data_bitrate is not None:
            _positive(self.data_bitrate, "data_bitrate", _EXAMPLE)
            if not self.fd:
                raise BusBudgetError(f"data_bitrate={self.data_bitrate:g} is set but fd=False: "
                                     "only CAN FD frames switch bitrate; give BusTiming(bitrate="
                                     f"{self.bitrate:g}, fd=True, data_bitrate="
                                     f"{self.data_bitrate:g}), or leave data_bitrate out")
            if not self.bitrate <= self.data_bitrate <= MAX_DATA_BITRATE:
                raise BusBudgetError(f"data_bitrate: expected from the nominal bitrate "
                                     f"{_bits(self.bitrate)} to {_bits(MAX_DATA_BITRATE)} in "
                                     f"bit/s, found {self.data_bitrate:g}; e.g. BusTiming("
                                     "bitrate=1e6, fd=True, data_bitrate=2e6)")

    @property
    def max_payload(self) -> int:
        """Largest payload of one frame, bytes: 8 on classic CAN, 64 on CAN FD."""
        return 64 if self.fd else 8

    def describe(self) -> str:
        """The timing in words, e.g. ``'1 Mbit/s classic CAN'``."""
        ids = ", 29-bit identifiers" if self.extended_ids else ""
        if not self.fd:
            return f"{_bits(self.bitrate)} classic CAN{ids}"
        data = f", data phase {_bits(self.data_bitrate)}" if self.data_bitrate else ""
        return f"CAN FD at {_bits(self.bitrate)}{data}{ids}"


def frame_bits(payload: int, timing: BusTiming = BusTiming(), *,
               stuffing: bool = True) -> tuple[int, int]:
    """Bits of one data frame at its longest, ``(at the nominal bitrate, at the data bitrate)``.

    Field layout of ISO 11898-1:2015, with ``n`` data bytes, ``‖`` between the parts of the
    frame and ``|`` between fields:

    - classic, 11-bit: SOF 1 | identifier 11 | RTR 1 | IDE 1 | r0 1 | DLC 4 | data 8n |
      CRC 15 ‖ CRC delimiter 1 | ACK slot 1 | ACK delimiter 1 | EOF 7 | intermission 3;
      29-bit identifiers put SRR 1, IDE 1, identifier extension 18, RTR 1, r1 1, r0 1
      after the 11-bit base identifier (20 bits more). Bit stuffing covers SOF to CRC:
      ``g + 8n`` bits, ``g`` = 34 (54 with 29 bits), then 13 unstuffed bits.
    - CAN FD, 11-bit: SOF 1 | identifier 11 | RRS 1 | IDE 1 | FDF 1 | res 1 | BRS 1 ‖
      ESI 1 | DLC 4 | data 8n | stuff count 4 | CRC 17 (n ≤ 16) or 21 ‖ CRC delimiter 1 |
      ACK slot 1 | ACK delimiter 1 | EOF 7 | intermission 3; 29-bit identifiers add SRR,
      IDE and the 18-bit extension (19 bits more). ``n`` is padded up to the next of
      :data:`FD_LENGTHS`. Dynamic stuffing covers SOF to the end of the data, ``a + 5 + 8n``
      bits with ``a`` = 17 (36) bits up to BRS. The stuff count (a 3-bit Gray-coded count of
      the dynamic stuff bits and a parity bit) and the CRC carry fixed stuff bits instead:
      one before the stuff count and one after every further 4 bits, 6 with CRC-17 and 7
      with CRC-21.

    Worst-case stuffing: after five equal bits a complement bit is inserted, and that bit
    starts the next run, so the worst pattern (00000 1111 0000 …) stuffs one bit after the
    5th bit and after every 4 more: ``⌊(L − 1)/4⌋`` stuff bits over ``L`` stuffed bits
    (classic 11-bit frames: 47 + 8n bits and ⌊(33 + 8n)/4⌋ stuff bits, 135 for 8 bytes).

    With bit-rate switching (``timing.data_bitrate`` set) the bitrate changes at the sample
    points of BRS and of the CRC delimiter. Here ESI through the CRC, with their stuff bits,
    count at the data bitrate; BRS, the CRC delimiter and the stuff bits of the arbitration
    part (``⌊(a − 1)/4⌋``, the most that can fall there) at the nominal one. This overstates
    a frame by less than three nominal bits. Without switching every bit is nominal.

    Parameters
    ----------
    payload : int
        Data bytes, 0–8 on classic CAN, 0–64 on CAN FD.
    timing : BusTiming
        Frame format (classic or FD, identifier length, bit-rate switching).
    stuffing : bool
        Count the worst-case dynamic stuff bits; ``False`` gives the frame as laid out (the
        fixed stuff bits of CAN FD are part of the layout and stay).

    Examples
    --------
    >>> frame_bits(8), frame_bits(0, stuffing=False)
    ((135, 0), (47, 0))
    >>> frame_bits(8, BusTiming(fd=True, data_bitrate=2e6))
    (34, 113)
    """
    _is(timing, BusTiming, "timing", "BusTiming(bitrate=1e6)")
    n = _payload(payload, timing)
    ext = timing.extended_ids
    tail = 13
    if not timing.fd:
        stuffed = (54 if ext else 34) + 8 * n
        return stuffed + tail + (stuffed - 1) // 4 * stuffing, 0
    head, crc = (36 if ext else 17), (17 if n <= 16 else 21)
    dynamic = head + 5 + 8 * n
    head_stuff = (head - 1) // 4 * stuffing
    fixed = (4 + crc + 3) // 4  # before the stuff count, then after every 4 bits: 6 or 7
    data = 5 + 8 * n + ((dynamic - 1) // 4 * stuffing - head_stuff) + 4 + crc + fixed
    nominal = head + head_stuff + tail
    return (nominal, data) if timing.data_bitrate else (nominal + data, 0)


def _payload(payload, timing: BusTiming, name: str = "payload") -> int:
    limit = timing.max_payload
    if isinstance(payload, bool) or not isinstance(payload, Integral) \
            or not 0 <= payload <= limit:
        fix = ("split it over several PDOs of at most 8 bytes, or use CAN FD: BusTiming("
               "fd=True, data_bitrate=2e6)" if not timing.fd and is_number(payload)
               and 8 < payload <= 64 else f"give a whole number of bytes from 0 to {limit}")
        raise BusBudgetError(f"{name}: a {'CAN FD' if timing.fd else 'classic CAN'} frame "
                             f"carries 0 to {limit} bytes, found {excerpt(payload)}; {fix}")
    return FD_LENGTHS[bisect_left(FD_LENGTHS, payload)] if timing.fd else int(payload)


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
        _flags(self, ("sync", "sync_counter"), example)
        if self.sync_counter and not self.sync:
            raise BusBudgetError("sync_counter=True needs sync=True: the counter travels in the "
                                 "SYNC frame")
        if not (self.sync or self.rpdo_bytes or self.tpdo_bytes):
            raise BusBudgetError(f"the cycle sends no frame: no SYNC and no PDO; {example}")

    def frames(self, timing: BusTiming) -> tuple[int, ...]:
        """Payload of every frame of one cycle, bytes (validated against ``timing``)."""
        one = [_payload(b, timing, f"rpdo_bytes[{i}]") for i, b in enumerate(self.rpdo_bytes)]
        one += [_payload(b, timing, f"tpdo_bytes[{i}]") for i, b in enumerate(self.tpdo_bytes)]
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
    _is(cycle, Cycle, "cycle", "Cycle(drives=6, rpdo_bytes=(8,), tpdo_bytes=(8,))")
    _is(timing, BusTiming, "timing", "BusTiming(bitrate=1e6)")
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
    return cycle_time(cycle, timing) * _positive(rate, "rate", "e.g. rate=1000.0 (Hz)")


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
    data = (f" (data phases counted at {_bits(timing.data_bitrate)})" if timing.data_bitrate
            else "")
    lines = [f"{cycle.describe()} at {rate:g} Hz need {_bits(load * timing.bitrate)} of "
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


def _bits(rate: float) -> str:
    for scale, unit in ((1e6, "Mbit/s"), (1e3, "kbit/s")):
        if rate >= scale:
            return f"{rate / scale:.3g} {unit}"
    return f"{rate:.3g} bit/s"
