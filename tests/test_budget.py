"""Bus budget: worst-case frame lengths against the ISO 11898-1 field layout, rebuilt here bit by
bit with a bit stuffer of its own, the load of a cycle, the refusal and its proposals, and every
bad input."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from fuzzing import FUZZ_SETTINGS
from hypothesis import event, given
from hypothesis import strategies as st

from dynid.errors import BusBudgetError
from dynid.hardware.budget import (
    FD_LENGTHS,
    BusTiming,
    Cycle,
    bus_load,
    check_budget,
    cycle_time,
    frame_bits,
    max_rate,
)

CLASSIC, CLASSIC29 = BusTiming(), BusTiming(extended_ids=True)
FD, FD_BRS = BusTiming(fd=True), BusTiming(fd=True, data_bitrate=2e6)
FD29_BRS = BusTiming(fd=True, data_bitrate=5e6, extended_ids=True)
TIMINGS = (CLASSIC, CLASSIC29, FD, FD_BRS, FD29_BRS)

# Fields of a data frame, ISO 11898-1:2015, (name, bits); "data" and "crc" are sized per frame.
ARBITRATION = {  # (fd, extended) → fields before the control field's length code
    (False, False): [("SOF", 1), ("ID", 11), ("RTR", 1), ("IDE", 1), ("r0", 1)],
    (False, True): [("SOF", 1), ("ID", 11), ("SRR", 1), ("IDE", 1), ("ID ext", 18),
                    ("RTR", 1), ("r1", 1), ("r0", 1)],
    (True, False): [("SOF", 1), ("ID", 11), ("RRS", 1), ("IDE", 1), ("FDF", 1), ("res", 1),
                    ("BRS", 1)],
    (True, True): [("SOF", 1), ("ID", 11), ("SRR", 1), ("IDE", 1), ("ID ext", 18), ("RRS", 1),
                   ("FDF", 1), ("res", 1), ("BRS", 1)],
}
TAIL = [("CRC delimiter", 1), ("ACK slot", 1), ("ACK delimiter", 1), ("EOF", 7),
        ("intermission", 3)]


def stuff_count(bits) -> tuple[int, list[int]]:
    """Stuff bits a transmitter inserts into ``bits`` (a complement after five equal bits, the
    stuff bit counting towards the next run), and after which original bit each one falls."""
    after, last, run = [], None, 0
    for i, b in enumerate(bits):
        run = run + 1 if b == last else 1
        last = b
        if run == 5:
            after.append(i)
            last, run = 1 - b, 1
    return len(after), after


def worst(length: int) -> list[int]:
    """The bit pattern that makes the stuffer insert the most bits: 00000 1111 0000 1111 …"""
    return ([0] * 5 + [1, 1, 1, 1, 0, 0, 0, 0] * length)[:length]


def built_frame(n: int, timing: BusTiming, bits) -> tuple[int, int]:
    """(nominal, data-phase) bits of a frame of ``n`` bytes whose dynamically stuffed part is
    ``bits(length)``, built field by field; BRS, CRC delimiter and the stuff bits that follow an
    arbitration bit go at the nominal rate, as :func:`frame_bits` documents."""
    head = sum(w for _, w in ARBITRATION[timing.fd, timing.extended_ids])
    tail = sum(w for _, w in TAIL)
    if not timing.fd:
        stuffed = head + 4 + 8 * n + 15  # DLC, data, CRC-15
        return stuffed + stuff_count(bits(stuffed))[0] + tail, 0
    n = min(x for x in FD_LENGTHS if x >= n)
    dynamic = head + 5 + 8 * n  # ESI, DLC, data
    count, after = stuff_count(bits(dynamic))
    in_head = sum(i < head for i in after)
    checked = 4 + (17 if n <= 16 else 21)  # stuff count and CRC
    fixed = len(range(0, checked, 4))  # a fixed stuff bit before every 4th bit, from the first
    nominal, data = head + in_head + tail, dynamic - head + count - in_head + checked + fixed
    return (nominal, data) if timing.data_bitrate else (nominal + data, 0)


def test_stuffing_bound_is_the_worst_case():
    rng = np.random.default_rng(11)
    for length in range(1, 600):
        assert stuff_count(worst(length))[0] == (length - 1) // 4
    for _ in range(3000):
        length = int(rng.integers(1, 600))
        bits = rng.integers(0, 2, length) if rng.random() < 0.5 else \
            np.repeat(rng.integers(0, 2, length), rng.integers(1, 7, length))[:length]
        assert stuff_count(list(bits))[0] <= (len(bits) - 1) // 4


def test_classic_closed_forms():
    # 11-bit: 47 + 8n bits, ⌊(34 + 8n − 1)/4⌋ stuff bits; 29-bit: 20 more before stuffing.
    assert frame_bits(8, stuffing=False) == (111, 0) and frame_bits(8) == (135, 0)
    assert frame_bits(0, stuffing=False) == (47, 0) and frame_bits(0) == (55, 0)
    assert frame_bits(8, CLASSIC29, stuffing=False) == (131, 0)
    assert frame_bits(8, CLASSIC29) == (160, 0)
    for n in range(9):
        assert frame_bits(n) == (47 + 8 * n + (33 + 8 * n) // 4, 0)
        assert frame_bits(n, CLASSIC29) == (67 + 8 * n + (53 + 8 * n) // 4, 0)


def test_fd_layout_without_dynamic_stuffing():
    # 67 bits of overhead with CRC-21 (86 with 29-bit identifiers), 5 fewer with CRC-17
    # (4 CRC bits and one fixed stuff bit), ignoring dynamic stuffing.
    for n in FD_LENGTHS:
        short = 5 if n <= 16 else 0
        assert frame_bits(n, FD, stuffing=False) == (67 - short + 8 * n, 0)
        assert sum(frame_bits(n, FD29_BRS, stuffing=False)) == 86 - short + 8 * n
    assert frame_bits(9, FD) == frame_bits(12, FD) and frame_bits(33, FD) == frame_bits(48, FD)


@pytest.mark.parametrize("timing", TIMINGS, ids=lambda t: t.describe())
def test_frames_built_bit_by_bit(timing):
    rng = np.random.default_rng(3)
    for n in range(timing.max_payload + 1):
        assert frame_bits(n, timing) == built_frame(n, timing, worst)
        alternating = built_frame(n, timing, lambda k: ([0, 1] * k)[:k])  # never stuffed
        assert frame_bits(n, timing, stuffing=False) == alternating
        for _ in range(20):  # real contents never stuff more (SOF is dominant)
            def content(k):
                return [0, *rng.integers(0, 2, k - 1)]
            nominal, data = built_frame(n, timing, content)
            bound = frame_bits(n, timing)
            assert nominal <= bound[0] and nominal + data <= sum(bound)


@pytest.mark.parametrize("timing", TIMINGS, ids=lambda t: t.describe())
def test_more_bytes_never_shorter(timing):
    times = [cycle_time(Cycle(1, (), (n,), sync=False), timing)
             for n in range(timing.max_payload + 1)]
    assert all(b >= a for a, b in itertools.pairwise(times))
    one = cycle_time(Cycle(2, (4,), (8,)), timing)
    assert cycle_time(Cycle(3, (4,), (8,)), timing) > one
    assert cycle_time(Cycle(2, (4,), (8, 0)), timing) > one
    assert cycle_time(Cycle(2, (4,), (8,), sync_counter=True), timing) > one


def test_fd_with_bit_rate_switching_beats_classic():
    classic, fd_fast, fd_slow = (cycle_time(Cycle(1, (), (8,), sync=False), t)
                                 for t in (CLASSIC, FD_BRS, FD))
    assert fd_fast < classic < fd_slow  # 34 µs + 113 bits at 2 Mbit/s; 135 µs; 147 µs
    assert math.isclose(fd_fast, 34e-6 + 113 / 2e6, rel_tol=1e-12)


def test_load_of_a_cycle_by_hand():
    # 6 drives × 2 frames of 8 bytes (135 bits each) and a SYNC (55 bits) on 1 Mbit/s at 500 Hz.
    result = check_budget(Cycle(6, (8,), (8,)), BusTiming(1e6), 500)
    assert result.bits == 12 * 135 + 55 and result.frames == 13
    assert math.isclose(result.load, 1675e-6 * 500, rel_tol=1e-12)
    assert math.isclose(result.margin, 0.9 - result.load, rel_tol=1e-12)
    assert "13 frames, 1675 worst-case bits" in result.summary()
    assert "83.8 % of the bus at 500 Hz (limit 90 %, margin 6.2 %)" in result.summary()
    # 500 kbit/s doubles every duration.
    assert math.isclose(bus_load(Cycle(6, (8,), (8,)), BusTiming(5e5), 500), 2 * result.load)


@pytest.mark.parametrize("timing", TIMINGS, ids=lambda t: t.describe())
@pytest.mark.parametrize("limit", [0.9, 0.5, 1.0])
def test_max_rate_uses_exactly_the_limit(timing, limit):
    cycle = Cycle(5, (6,), (8, 4))
    top = max_rate(cycle, timing, limit)
    assert math.isclose(top * cycle_time(cycle, timing), limit, rel_tol=1e-12)
    assert check_budget(cycle, timing, top * (1 - 1e-9), max_load=limit).margin >= 0
    with pytest.raises(BusBudgetError):
        check_budget(cycle, timing, top * (1 + 1e-9), max_load=limit)


def _proposed(message: str, line: str) -> float:
    match = re.search(re.escape(line) + r".*?up to (\S+) Hz", message)
    assert match, message
    return float(match.group(1))


def test_seven_drives_at_one_kilohertz_do_not_fit_classic_can():
    cycle = Cycle(drives=7, rpdo_bytes=(8,), tpdo_bytes=(8,))
    with pytest.raises(BusBudgetError) as info:
        check_budget(cycle, BusTiming(bitrate=1e6), rate=1000)
    message = str(info.value)
    assert message.startswith("7 drives × (1 RPDO of 8 bytes + 1 TPDO of 8 bytes) + SYNC at "
                              "1000 Hz need 1.94 Mbit/s of worst-case bus time, 194.5 % of "
                              "1 Mbit/s classic CAN (limit 90 %)")
    rate = _proposed(message, "this mapping")
    assert 0.99 * max_rate(cycle, CLASSIC) <= rate <= max_rate(cycle, CLASSIC)
    check_budget(cycle, CLASSIC, rate)
    # CAN FD with a 5 Mbit/s data phase carries it, 2 Mbit/s does not; both are said.
    assert re.search(r"data phase 5 Mbit/s: [\d.]+ % at 1000 Hz, fits", message)
    assert re.search(r"data phase 2 Mbit/s: [\d.]+ % at 1000 Hz, too much", message)
    check_budget(cycle, BusTiming(1e6, fd=True, data_bitrate=5e6), 1000)
    with pytest.raises(BusBudgetError):
        check_budget(cycle, BusTiming(1e6, fd=True, data_bitrate=2e6), 1000)
    for speed in (2, 5):
        fd = BusTiming(1e6, fd=True, data_bitrate=speed * 1e6)
        check_budget(cycle, fd, _proposed(message, f"data phase {speed} Mbit/s"))


def test_refusal_names_the_load_and_the_packed_mapping():
    cycle = Cycle(drives=7, rpdo_bytes=(4,), tpdo_bytes=(8,))
    with pytest.raises(BusBudgetError, match=r"need 1\.67 Mbit/s of worst-case bus time, "
                                             r"166\.5 % of 1 Mbit/s"):
        check_budget(cycle, CLASSIC, 1000)
    # Two TPDOs of 4 bytes and one of 2 pack into frames of 8 and 2 bytes on classic CAN.
    cycle = Cycle(drives=6, rpdo_bytes=(8,), tpdo_bytes=(4, 4, 2))
    packed = cycle.packed(8)
    assert packed.tpdo_bytes == (8, 2) and packed.rpdo_bytes == (8,)
    with pytest.raises(BusBudgetError) as info:
        check_budget(cycle, CLASSIC, 1000)
    message = str(info.value)
    rate = _proposed(message, "packed into fewer frames")
    check_budget(packed, CLASSIC, rate)
    assert rate > max_rate(cycle, CLASSIC)
    assert "1 TPDO of 10 bytes" in message  # on CAN FD they fit one frame


@pytest.mark.parametrize("timing", TIMINGS, ids=lambda t: t.describe())
def test_proposed_rate_fits_even_on_a_round_limit(timing):
    # Where max_load / cycle_time is a round number it is also the first candidate (2240 Hz for
    # 2 drives × (6 + 0 bytes) + SYNC on FD at 2 Mbit/s, max_load 0.7), and may exceed the
    # limit by one rounding; the rate written must still fit.
    for drives, rpdo, tpdo, limit in ((d, r, t, lim) for d in (1, 2, 3, 7) for r in range(9)
                                      for t in range(0, 9, 2) for lim in (0.9, 0.7, 0.5)):
        cycle = Cycle(drives, (rpdo,), (tpdo,))
        with pytest.raises(BusBudgetError) as info:
            check_budget(cycle, timing, 1e5, max_load=limit)
        check_budget(cycle, timing, _proposed(str(info.value), "this mapping"), max_load=limit)


@given(st.lists(st.integers(0, 64), max_size=12), st.sampled_from([8, 12, 64]))
def test_packing_keeps_the_bytes_in_fewer_frames(sizes, capacity):
    sizes = [min(s, capacity) for s in sizes]
    packed = Cycle(1, (), tuple(sizes), sync=True).packed(capacity).tpdo_bytes
    assert sum(packed) == sum(sizes) and all(f <= capacity for f in packed)
    assert len(packed) <= len(sizes) and len(packed) >= math.ceil(sum(sizes) / capacity)


def test_fd_interface_is_offered_a_faster_data_phase_only():
    cycle = Cycle(drives=20, rpdo_bytes=(8,), tpdo_bytes=(8,))
    with pytest.raises(BusBudgetError) as info:
        check_budget(cycle, FD_BRS, 1000)
    assert "data phase 5 Mbit/s" in str(info.value)
    assert "data phase 2 Mbit/s:" not in str(info.value)  # what it has already


BAD = [
    (lambda: frame_bits(9), r"payload: a classic CAN frame carries 0 to 8 bytes, found 9; "
                            r"split it .* or use CAN FD"),
    (lambda: frame_bits(65, FD), r"payload: a CAN FD frame carries 0 to 64 bytes, found 65"),
    (lambda: frame_bits(-1), r"found -1; give a whole number of bytes from 0 to 8"),
    (lambda: frame_bits(2.5), r"found 2\.5"),
    (lambda: frame_bits(True), r"found True"),
    (lambda: frame_bits(8, "1M"), r"timing: expected a BusTiming, found '1M'"),
    (lambda: cycle_time(Cycle(2, (8,), (12,)), CLASSIC), r"tpdo_bytes\[0\].*found 12"),
    (lambda: cycle_time(Cycle(2, (4, "8"), ()), CLASSIC), r"rpdo_bytes\[1\].*found '8'"),
    (lambda: cycle_time("cycle", CLASSIC), r"cycle: expected a Cycle, found 'cycle'"),
    (lambda: BusTiming(data_bitrate=2e6), r"data_bitrate=2e\+06 is set but fd=False.*fd=True"),
    (lambda: BusTiming(bitrate=0), r"bitrate: expected a positive finite number, found 0"),
    (lambda: BusTiming(bitrate=-1e6), r"bitrate: .* found -1000000\.0"),
    (lambda: BusTiming(bitrate=float("nan")), r"bitrate: .* found nan"),
    (lambda: BusTiming(bitrate="1M"), r"bitrate: .* found '1M'"),
    (lambda: BusTiming(bitrate=1000), r"nominal bitrate from 10 kbit/s to 1 Mbit/s.*found 1000"),
    (lambda: BusTiming(bitrate=5e6), r"found 5e\+06.*data_bitrate"),
    (lambda: BusTiming(fd=True, data_bitrate=0.0), r"data_bitrate: .* found 0\.0"),
    (lambda: BusTiming(fd=True, data_bitrate=5e5), r"data_bitrate: expected from the nominal"),
    (lambda: BusTiming(fd=True, data_bitrate=1e9), r"to 20 Mbit/s in bit/s, found 1e\+09"),
    (lambda: BusTiming(fd="yes"), r"fd: expected True or False, found 'yes'"),
    (lambda: BusTiming(extended_ids=1), r"extended_ids: expected True or False, found 1"),
    (lambda: Cycle(0, (8,), (8,)), r"drives: expected a whole number from 1 to 127.* found 0"),
    (lambda: Cycle(128, (8,), (8,)), r"drives: .* found 128"),
    (lambda: Cycle(2.0, (8,), (8,)), r"drives: .* found 2\.0"),
    (lambda: Cycle(True, (8,), (8,)), r"drives: .* found True"),
    (lambda: Cycle(2, 8, (8,)), r"rpdo_bytes: expected a tuple of payload sizes.* found 8"),
    (lambda: Cycle(2, (8,), (8,) * 513), r"tpdo_bytes: a CANopen node has at most 512"),
    (lambda: Cycle(2, (8,), (8,), sync="no"), r"sync: expected True or False, found 'no'"),
    (lambda: Cycle(2, (8,), (8,), sync=False, sync_counter=True), r"sync_counter=True needs"),
    (lambda: Cycle(2, (), (), sync=False), r"the cycle sends no frame"),
    (lambda: bus_load(Cycle(1, (8,), ()), CLASSIC, 0), r"rate: expected a positive .* found 0"),
    (lambda: bus_load(Cycle(1, (8,), ()), CLASSIC, -5.0), r"rate: .* found -5\.0"),
    (lambda: bus_load(Cycle(1, (8,), ()), CLASSIC, float("inf")), r"rate: .* found inf"),
    (lambda: check_budget(Cycle(1, (8,), ()), CLASSIC, None), r"rate: .* found None"),
    (lambda: check_budget(Cycle(1, (8,), ()), CLASSIC, 100, max_load=0),
     r"max_load: expected a fraction of the bus time in \(0, 1\], found 0"),
    (lambda: max_rate(Cycle(1, (8,), ()), CLASSIC, 1.5), r"max_load: .* found 1\.5"),
    (lambda: max_rate(Cycle(1, (8,), ()), CLASSIC, float("nan")), r"max_load: .* found nan"),
]


@pytest.mark.parametrize("call, match", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_input_is_refused_with_its_fix(call, match):
    with pytest.raises(BusBudgetError, match=match):
        call()


def test_numpy_integers_are_accepted():
    cycle = Cycle(np.int64(3), [np.int32(8)], (np.uint8(4),))
    assert cycle.rpdo_bytes == (np.int32(8),)
    assert cycle_time(cycle, CLASSIC) == cycle_time(Cycle(3, (8,), (4,)), CLASSIC)


_anything = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.floats(),
                      st.integers(-10, 10 ** 6))


def _mostly(draw, valid):
    """A value of ``valid`` nine times in ten, anything else otherwise."""
    return draw(valid if draw(st.integers(0, 9)) else _anything)


@st.composite
def _arguments(draw):
    """Arguments of check_budget, mostly valid: (bitrate, fd, data_bitrate, extended_ids),
    (drives, rpdo_bytes, tpdo_bytes, sync, sync_counter), rate and max_load."""
    fd = draw(st.booleans())
    data = draw(st.sampled_from([None, 2e6, 5e6, 8e6])) if fd else None
    sizes = st.lists(st.integers(0, 64 if fd else 8), max_size=4)
    sync = draw(st.booleans())
    timing = (_mostly(draw, st.sampled_from([125e3, 250e3, 500e3, 1e6])), fd,
              _mostly(draw, st.just(data)), draw(st.booleans()))
    cycle = (_mostly(draw, st.integers(1, 20)), _mostly(draw, sizes),
             _mostly(draw, sizes), sync, _mostly(draw, st.just(sync and draw(st.booleans()))))
    return timing, cycle, _mostly(draw, st.floats(1, 3000)), _mostly(draw, st.floats(0.01, 1))


@pytest.mark.fuzz
@FUZZ_SETTINGS
@given(_arguments())
def test_check_budget_fits_or_refuses(arguments):
    timing_args, cycle_args, rate, limit = arguments
    try:
        timing = BusTiming(*timing_args)
        cycle = Cycle(*cycle_args)
        result = check_budget(cycle, timing, rate, max_load=limit)
    except BusBudgetError as error:
        message = str(error)
        event("refused" if "What would fit" in message else "invalid input")
        if "What would fit" in message:  # a refusal: the rate it proposes fits
            proposed = _proposed(message, "this mapping")
            if proposed > 0:
                check_budget(cycle, timing, proposed, max_load=limit)
        return
    event("fits")
    assert 0 < result.load <= result.max_load == limit and result.margin >= 0
    assert result.bits > 0 and result.rate <= result.max_rate * (1 + 1e-12)


def test_docstring_examples_hold():
    import doctest

    import dynid.hardware.budget as budget
    import dynid.hardware.canframe as canframe
    assert doctest.testmod(budget).failed == 0
    assert doctest.testmod(canframe).failed == 0
