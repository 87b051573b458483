"""CAN frames → samples: logs written by python-can's ASC, BLF and candump writers decode to the
motion that made them (within the drives' quantization), live and offline paths agree, dropped,
repeated and foreign frames are counted, and bad logs and settings are refused."""

from __future__ import annotations

import struct

import can
import numpy as np
import pytest

from dynid.errors import DataError, DriveConfigError
from dynid.hardware.decode import CycleAssembler, decode_log
from dynid.hardware.pdo import PdoMapping, Scaling, unwrap_microseconds

NODES = [3, 1, 7]
NAMES = ["m1", "m2", "m3"]
SCALINGS = [Scaling.from_turn(4096, gear_ratio=50.0, zero=1000, rated=2.5),
            Scaling.from_turn(2**17, gear_ratio=121.0, zero=-77, rated=6.0),
            Scaling.from_turn(1000, gear_ratio=9.5, rated=0.8)]
# CiA 402 data types of the objects: INTEGER32, INTEGER16, UNSIGNED32, little-endian.
TYPES = {"position": "i", "current": "h", "timestamp": "I"}
WRITERS = {"asc": can.ASCWriter, "blf": can.BLFWriter, "log": can.CanutilsLogWriter}
START = 2**32 - 30_000  # the drives' µs clock wraps after 30 cycles
FD_SIZES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)


def _motion(N=120):
    t = np.arange(N) * 1e-3
    q = np.column_stack([0.8 * np.sin(2 * np.pi * 2 * t + j) + j for j in range(3)])
    i = np.column_stack([(j + 1) * 0.3 * np.cos(2 * np.pi * 3 * t - j) for j in range(3)])
    i += 0.01 * np.random.default_rng(N).standard_normal(i.shape)  # no flat runs at the peaks
    return t, q, i


def _payload(objects, values, fd):
    data = struct.pack("<" + "".join(TYPES[o] for o in objects), *(values[o] for o in objects))
    size = next(s for s in FD_SIZES if s >= len(data)) if fd else len(data)
    return data + bytes(size - len(data))


def _frames(mapping, q, i, *, drop=(), stamped=True, t0=1000.0):
    """SYNC then every node's TPDOs, cycle after cycle; ``drop``: (cycle, node, TPDO from 1)."""
    fd = mapping.fd
    frames = []
    for k in range(len(q)):
        ts = t0 + k * 1e-3 + 1e-6 * (k % 3)
        frames.append(can.Message(timestamp=ts, arbitration_id=0x80, is_extended_id=False,
                                  is_fd=fd))
        for j, node in enumerate(NODES):
            values = {"position": int(SCALINGS[j].to_counts(q[k, j])),
                      "current": int(SCALINGS[j].to_output(i[k, j])),
                      "timestamp": (START + 1000 * k + 3 * j) % 2**32}
            for p, pdo in enumerate(mapping.tpdos):
                if (k, node, p + 1) in drop:
                    continue
                frames.append(can.Message(
                    timestamp=ts + 1e-4 * (1 + j + p), arbitration_id=0x180 + 0x100 * p + node,
                    data=_payload(pdo.objects, values, fd), is_extended_id=False, is_fd=fd))
    return frames


def _log(path, frames):
    with WRITERS[path.suffix[1:]](path) as w:
        for f in frames:
            w.on_message_received(f)
    return path


def _decode(path, mapping, **options):
    return decode_log(path, mapping=mapping, node_ids=NODES, scalings=SCALINGS, names=NAMES,
                      output_kind="current", **options)


@pytest.mark.parametrize("fd", [False, True], ids=["classic", "fd"])
@pytest.mark.parametrize("suffix", ["asc", "blf", "log"])
def test_a_log_decodes_to_the_motion_that_made_it(tmp_path, suffix, fd):
    mapping = PdoMapping.default("current", fd=fd)
    t, q, i = _motion()
    frames = _frames(mapping, q, i)
    rec = _decode(_log(tmp_path / f"run.{suffix}", frames), mapping)
    assert rec.n_samples == len(t) and rec.names == tuple(NAMES) and rec.space == "actuator"
    for j, s in enumerate(SCALINGS):  # within half an increment, half a thousandth
        assert np.max(np.abs(rec.positions[:, j] - q[:, j])) <= s.resolution / 2 * (1 + 1e-9)
        assert np.max(np.abs(rec.output[:, j] - i[:, j])) <= s.rated / 2000 * (1 + 1e-9)
    stamps = (START + 1000 * np.arange(len(t))) % 2**32  # the first node's, wrapping
    np.testing.assert_array_equal(rec.time, unwrap_microseconds(stamps))
    np.testing.assert_allclose(rec.time, t, rtol=0, atol=1e-12)
    assert rec.history[0] == (f"decoded run.{suffix} ({ {'log': 'candump'}.get(suffix, suffix)}"
                              f" log): {len(frames)} frames; 120 cycles, 120 complete, "
                              "0 dropped")
    # The live path: the same frames fed one by one give the same samples.
    asm = CycleAssembler(mapping, NODES, SCALINGS)
    live = [s for f in frames if (s := asm.feed(f.arbitration_id, f.data, f.timestamp))]
    np.testing.assert_array_equal([s.positions for s in live], rec.positions)
    np.testing.assert_array_equal([s.output for s in live], rec.output)
    np.testing.assert_array_equal([s.time for s in live], rec.time)


@pytest.mark.parametrize("suffix", ["asc", "blf", "log"])
def test_without_drive_stamps_the_time_is_the_sync_frames(tmp_path, suffix):
    mapping = PdoMapping.default("current", timestamp=False)
    _, q, i = _motion(40)
    frames = _frames(mapping, q, i, t0=1.7e9)
    rec = _decode(_log(tmp_path / f"run.{suffix}", frames), mapping, timestamps="keep")
    sync = np.array([f.timestamp for f in frames if f.arbitration_id == 0x80])
    np.testing.assert_allclose(rec.time, sync - sync[0], rtol=0, atol=1.5e-6)  # µs in logs
    assert rec.history[1] == "time from the log's reception times of the SYNC frames"


def test_a_sample_is_returned_as_its_last_tpdo_arrives():
    mapping = PdoMapping.default("current")
    _, q, i = _motion(3)
    frames = _frames(mapping, q, i)
    asm = CycleAssembler(mapping, NODES, SCALINGS)
    out = [asm.feed(f.arbitration_id, f.data, f.timestamp) for f in frames]
    per_cycle = 1 + 2 * len(NODES)
    assert [k for k, s in enumerate(out) if s is not None] == [per_cycle * (c + 1) - 1
                                                               for c in range(3)]
    s = out[2 * per_cycle - 1]
    assert s.cycle == 1 and s.sync_time == frames[per_cycle].timestamp and s.time == 1e-3
    assert s.raw["position"].tolist() == [int(SCALINGS[j].to_counts(q[1, j])) for j in range(3)]
    assert s.stamps.tolist() == [(START + 1000 + 3 * j) % 2**32 for j in range(3)]
    assert asm.stats.complete == 3 and asm.stats.dropped == 0


def test_a_dropped_frame_drops_its_cycle_and_says_which_node(tmp_path):
    mapping = PdoMapping.default("current")
    t, q, i = _motion(60)
    frames = _frames(mapping, q, i, drop={(5, 1, 2), (9, 7, 1), (9, 3, 2)})
    path = _log(tmp_path / "run.blf", frames)
    with pytest.raises(DataError, match=r"run.blf \(time\):.*gap"):
        _decode(path, mapping)
    rec = _decode(path, mapping, timestamps="keep")
    np.testing.assert_allclose(rec.time, np.delete(t, [5, 9]), rtol=0, atol=1e-12)
    assert np.max(np.abs(rec.positions - np.delete(q, [5, 9], axis=0))) < 1e-3
    assert rec.history[0].endswith("60 cycles, 58 complete, 2 dropped (node 1 missing TPDO2 1×"
                                   ", node 3 missing TPDO2 1×, node 7 missing TPDO1 1×)")
    asm = CycleAssembler(mapping, NODES, SCALINGS)
    for f in frames:
        asm.feed(f.arbitration_id, f.data, f.timestamp)
    asm.finish()
    assert asm.stats.dropped_by_node == {1: 1, 3: 1, 7: 1}
    assert asm.stats.missing == {(1, 2): 1, (3, 2): 1, (7, 1): 1}


def test_late_repeated_short_and_foreign_frames_are_counted(tmp_path):
    mapping = PdoMapping.default("current")
    _, q, i = _motion(20)
    frames = _frames(mapping, q, i)
    tpdo = frames[1]  # node 3's TPDO1 of cycle 0
    msg = can.Message
    extra = [
        msg(timestamp=999.0, arbitration_id=tpdo.arbitration_id, data=tpdo.data,
            is_extended_id=False),                                     # before the first SYNC
        msg(timestamp=1000.0009, arbitration_id=0x183, data=bytes(6), is_extended_id=False),
        msg(timestamp=1000.0009, arbitration_id=0x185, data=bytes(6), is_extended_id=False),
        msg(timestamp=1000.0009, arbitration_id=0x081, data=bytes(8), is_extended_id=False),
        msg(timestamp=1000.0009, arbitration_id=0x183, data=bytes(6), is_extended_id=True),
    ]
    per_cycle = 1 + 2 * len(NODES)
    short = frames[3 * per_cycle + 3]  # node 1's TPDO1 of cycle 3, cut to 5 bytes
    short = msg(timestamp=short.timestamp, arbitration_id=short.arbitration_id,
                data=short.data[:5], is_extended_id=False)
    stream = [extra[0], *frames[:per_cycle], *extra[1:], *frames[per_cycle:3 * per_cycle + 3],
              short, *frames[3 * per_cycle + 4:]]
    asm = CycleAssembler(mapping, NODES, SCALINGS)
    samples = [s for f in stream if not f.is_extended_id and (
        s := asm.feed(f.arbitration_id, f.data, f.timestamp))]
    asm.finish()
    stats = asm.stats
    assert (stats.late, stats.duplicate, stats.short, stats.unknown, stats.errors) == \
        (1, 1, 1, 2, 2)
    assert stats.unknown_ids == {0x185: 1, 0x081: 1} and stats.dropped_by_node == {1: 1}
    assert samples[0].raw["position"][0] == struct.unpack_from("<i", tpdo.data)[0]  # first kept
    rec = _decode(_log(tmp_path / "run.log", stream), mapping, timestamps="keep")
    np.testing.assert_array_equal(rec.positions, [s.positions for s in samples])
    assert "1 TPDOs received twice in a cycle; 1 TPDOs too short; 1 TPDOs before the first " \
           "SYNC; 2 frames of other COB-IDs ignored; 1 error, remote or extended frames " \
           "skipped" in rec.history[0]


def _bad(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    return path


ASC_HEAD = ("date Mon May 1 10:00:00.000 am 2024\nbase hex  timestamps absolute\n"
            "no internal events logged\nBegin Triggerblock\n")


@pytest.mark.parametrize("name, text, options, message", [
    ("run.trc", "x", {}, r"run.trc: unknown CAN log suffix '.trc'; expected .asc, .blf, .log"),
    ("run.txt", "x", {"format": "csv"}, r"format: expected one of asc, blf, candump"),
    ("run.asc", ASC_HEAD + "   0.000100 1  80   Rx   d 0\n   0.000200 1  1ZZ   Rx   d 2 00 00\n",
     {}, r"run.asc, line 6: not a readable asc log; python-can says ValueError"),
    ("run.log", "(0.000100) can0 080#\n(0.000200) can0 183#000000000000\nhello world\n", {},
     r"run.log, line 3: not a readable candump log"),
    ("run.blf", bytes(range(256)) * 2, {}, r"run.blf: not a readable blf log; python-can says "
                                           "BLFParseError"),
    ("run.txt", "(0.1) can0 183#000000000000\n", {"format": "candump"},
     r"run.txt: no SYNC frames \(COB-ID 0x080\) among its 1 frames \(COB-IDs in the log, "
     r"most frequent first: 0x183\)"),
    ("empty.log", "", {}, r"empty.log: no CAN frames found; is it a candump log\?"),
    ("run.log", "(0.1) can0 080#\n(0.2) can0 183#000000000000\n(0.2) can0 283#00000000\n"
     "(0.2) can0 181#000000000000\n(0.2) can0 281#00000000\n", {},
     r"run.log: no transmit PDO of node 7 \(COB-IDs 0x187, 0x287\) in 1 cycles; COB-IDs in "
     r"the log, most frequent first: 0x183, 0x283, 0x181, 0x281\."),
    ("run.log", "(0.1) can0 080#\n(0.2) can0 183#000000000000\n", {"output_kind": "joint_torque"},
     r"output_kind: the drives send current \(the mapping\), so expected current"),
])
def test_bad_logs_are_refused_naming_the_file(tmp_path, name, text, options, message):
    settings = {"mapping": PdoMapping.default("current"), "node_ids": NODES,
                "scalings": SCALINGS, "names": NAMES, "output_kind": "current", **options}
    with pytest.raises(DataError, match=message):
        decode_log(_bad(tmp_path, name, text), **settings)


def test_a_missing_log_is_refused(tmp_path):
    with pytest.raises(DataError, match=r"CAN log '.*nothing.blf': no such file"):
        decode_log(tmp_path / "nothing.blf", mapping=PdoMapping.default(), node_ids=[1],
                   scalings=SCALINGS[:1], names=["a"], output_kind="current")


@pytest.mark.parametrize("nodes, scalings, sync_id, message", [
    ([1, 1], SCALINGS[:2], 0x80, r"node_ids: expected distinct CANopen node ids"),
    ([0, 2], SCALINGS[:2], 0x80, r"node_ids: .* found \[0, 2\]"),
    ([1, 128], SCALINGS[:2], 0x80, r"node_ids"),
    ([1, 2], SCALINGS, 0x80, r"scalings: expected one Scaling per node \(2\)"),
    ([1, 2], SCALINGS[0], 0x80, r"scalings"),
    ([1, 2], SCALINGS[:2], 0x181, r"sync_id: expected an 11-bit COB-ID other than the drives'"),
    ([1, 2], SCALINGS[:2], 0x800, r"sync_id"),
])
def test_bad_assembler_settings_are_refused(nodes, scalings, sync_id, message):
    with pytest.raises(DriveConfigError, match=message):
        CycleAssembler(PdoMapping.default(), nodes, scalings, sync_id=sync_id)
    with pytest.raises(DriveConfigError, match=r"mapping: expected a PdoMapping"):
        CycleAssembler({"tpdos": []}, [1], SCALINGS[:1])
