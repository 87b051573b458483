"""CAN data frames at their longest: the bit timing of a bus (:class:`BusTiming`) and the
worst-case bits of one data frame on classic CAN and CAN FD (:func:`frame_bits`).

Frames follow the field layout of ISO 11898-1:2015 and are counted with every stuff bit the
standard allows, and with the interframe space; a CAN FD payload is padded up to the next of
:data:`FD_LENGTHS`. Nominal bitrates span CiA 301's bit timing table (10 kbit/s to 1 Mbit/s);
a CAN FD data phase may run from the nominal bitrate up to :data:`MAX_DATA_BITRATE`. The bus
budget of a whole control cycle is :mod:`dynid.hardware.budget`'s. Invalid arguments raise
:class:`~dynid.errors.BusBudgetError`::

    >>> frame_bits(8, BusTiming(bitrate=1e6))
    (135, 0)
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from numbers import Integral

from .._files import excerpt
from .._validate import is_number
from ..errors import BusBudgetError

__all__ = ["FD_LENGTHS", "MAX_DATA_BITRATE", "NOMINAL_BITRATES", "BusTiming", "bitrate_text",
           "check_flags", "check_positive", "check_type", "frame_bits", "payload_length"]

#: Payload lengths a CAN FD frame can carry, bytes; other lengths are padded to the next one.
FD_LENGTHS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)
#: Nominal bitrates of CiA 301's bit timing table span 10 kbit/s to 1 Mbit/s (ISO 11898's top).
NOMINAL_BITRATES = (10e3, 1e6)
#: Fastest data phase accepted, bit/s (CAN FD transceivers run theirs at 2 to 8 Mbit/s).
MAX_DATA_BITRATE = 20e6
EXAMPLE = "e.g. BusTiming(bitrate=1e6) or BusTiming(bitrate=1e6, fd=True, data_bitrate=5e6)"


def check_positive(value, name: str, example: str) -> float:
    """``value`` as a float, or :class:`~dynid.errors.BusBudgetError` naming ``name``."""
    if not is_number(value) or not value > 0:
        raise BusBudgetError(f"{name}: expected a positive finite number, found "
                             f"{excerpt(value)}; {example}")
    return float(value)


def check_flags(owner: object, names: tuple[str, ...], example: str) -> None:
    """Each attribute ``names`` of ``owner`` is a bool."""
    for name in names:
        if not isinstance(getattr(owner, name), bool):
            raise BusBudgetError(f"{name}: expected True or False, found "
                                 f"{excerpt(getattr(owner, name))}; {example}")


def check_type(value: object, kind: type, name: str, example: str) -> None:
    """``value`` is a ``kind``."""
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
        if check_positive(self.bitrate, "bitrate", EXAMPLE) < low or self.bitrate > high:
            raise BusBudgetError(f"bitrate: expected a nominal bitrate from "
                                 f"{bitrate_text(low)} to {bitrate_text(high)} in bit/s, found "
                                 f"{self.bitrate:g}; {EXAMPLE} "
                                 "(a faster data phase is data_bitrate)")
        check_flags(self, ("fd", "extended_ids"), EXAMPLE)
        if self.data_bitrate is not None:
            check_positive(self.data_bitrate, "data_bitrate", EXAMPLE)
            if not self.fd:
                raise BusBudgetError(f"data_bitrate={self.data_bitrate:g} is set but fd=False: "
                                     "only CAN FD frames switch bitrate; give BusTiming(bitrate="
                                     f"{self.bitrate:g}, fd=True, data_bitrate="
                                     f"{self.data_bitrate:g}), or leave data_bitrate out")
            if not self.bitrate <= self.data_bitrate <= MAX_DATA_BITRATE:
                raise BusBudgetError(f"data_bitrate: expected from the nominal bitrate "
                                     f"{bitrate_text(self.bitrate)} to "
                                     f"{bitrate_text(MAX_DATA_BITRATE)} in "
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
            return f"{bitrate_text(self.bitrate)} classic CAN{ids}"
        data = f", data phase {bitrate_text(self.data_bitrate)}" if self.data_bitrate else ""
        return f"CAN FD at {bitrate_text(self.bitrate)}{data}{ids}"


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
    check_type(timing, BusTiming, "timing", "BusTiming(bitrate=1e6)")
    n = payload_length(payload, timing)
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


def payload_length(payload, timing: BusTiming, name: str = "payload") -> int:
    """The bytes a frame of ``timing`` carries for ``payload`` data bytes (CAN FD pads them
    up to the next of :data:`FD_LENGTHS`), or an error naming ``name``."""
    limit = timing.max_payload
    if isinstance(payload, bool) or not isinstance(payload, Integral) \
            or not 0 <= payload <= limit:
        fix = ("split it over several PDOs of at most 8 bytes, or use CAN FD: BusTiming("
               "fd=True, data_bitrate=2e6)" if not timing.fd and is_number(payload)
               and 8 < payload <= 64 else f"give a whole number of bytes from 0 to {limit}")
        raise BusBudgetError(f"{name}: a {'CAN FD' if timing.fd else 'classic CAN'} frame "
                             f"carries 0 to {limit} bytes, found {excerpt(payload)}; {fix}")
    return FD_LENGTHS[bisect_left(FD_LENGTHS, payload)] if timing.fd else int(payload)


def bitrate_text(rate: float) -> str:
    """A bitrate in words, e.g. ``'1 Mbit/s'``."""
    for scale, unit in ((1e6, "Mbit/s"), (1e3, "kbit/s")):
        if rate >= scale:
            return f"{rate / scale:.3g} {unit}"
    return f"{rate:.3g} bit/s"
