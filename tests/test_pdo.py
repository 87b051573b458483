"""PDO mappings, their codecs and the unit scaling at the drive edge; the default CiA 402
dictionary and drive settings."""

import struct

import canopen
import numpy as np
import pytest

from dynid.errors import DriveConfigError
from dynid.hardware.dictionary import REQUIRED, cia402_dictionary, load_dictionary
from dynid.hardware.pdo import OBJECTS, Pdo, PdoMapping, Scaling, unwrap_microseconds
from dynid.hardware.settings import BusSettings, DriveSettings
from dynid.models import load_robot


def test_default_mapping_sizes_and_codec_round_trip():
    m = PdoMapping.default("current")
    assert m.rpdo_bytes == (6,) and m.tpdo_bytes == (6, 4)
    assert PdoMapping.default(feedforward=False).rpdo_bytes == (4,)
    fd = PdoMapping.default("torque", fd=True)
    assert fd.tpdo_bytes == (10,) and fd.output == "torque"
    # Encoding by hand, little-endian, in the mapped order (CiA 301).
    data = struct.pack("<ih", -123456, -321)
    assert m.decode(0, data) == {"position": -123456, "current": -321}
    assert m.encode({"target_position": 2**31 - 1, "torque_offset": -2}) == [
        struct.pack("<ih", 2**31 - 1, -2)]
    assert PdoMapping.from_dict(m.to_dict()) == m


def test_mapping_refuses_what_cannot_be_sent():
    with pytest.raises(DriveConfigError, match="exceed a classic CAN frame"):
        PdoMapping(rpdos=[["target_position"]],
                   tpdos=[["position", "current", "timestamp"]])
    with pytest.raises(DriveConfigError, match="cannot be mapped in this direction"):
        PdoMapping(rpdos=[["target_position", "position"]], tpdos=[["position", "current"]])
    with pytest.raises(DriveConfigError, match="target position must be mapped"):
        PdoMapping(rpdos=[["controlword"]], tpdos=[["position", "current"]])
    with pytest.raises(DriveConfigError, match="current or torque"):
        PdoMapping(rpdos=[["target_position"]], tpdos=[["position"]])
    with pytest.raises(DriveConfigError, match="unknown object 'speed'"):
        Pdo(("speed",))
    with pytest.raises(DriveConfigError, match="mapped in two PDOs"):
        PdoMapping(rpdos=[["target_position"]], tpdos=[["position", "current"], ["position"]])
    with pytest.raises(DriveConfigError, match="1 to 4 PDOs"):
        PdoMapping(rpdos=[["target_position"]], tpdos=[["position"], ["current"], ["timestamp"],
                                                       ["statusword"], ["velocity"]])
    with pytest.raises(DriveConfigError, match="expected 6 bytes"):
        PdoMapping.default().decode(0, b"\x00\x01")


def test_scaling_round_trips_within_half_an_increment():
    sc = Scaling.from_turn(4096, gear_ratio=3.0, zero=1000, rated=2.5)
    q = np.linspace(-7.0, 7.0, 101)
    counts = sc.to_counts(q)
    assert counts.dtype == np.int64
    assert np.max(np.abs(sc.position(counts) - q)) <= sc.resolution / 2 * (1 + 1e-12)
    assert sc.position(1000) == 0.0
    # Thousandths of the rated current: 1 ‰ of 2.5 A is 2.5 mA.
    assert sc.output(np.array([1000, -4])).tolist() == [2.5, -0.01]
    assert sc.to_output(np.array([1e9]))[0] == 2**15 - 1          # saturated, not wrapped
    with pytest.raises(DriveConfigError, match="32-bit position range"):
        Scaling(resolution=1e-9).to_counts(np.array([10.0]))
    for bad in ({"resolution": 0.0}, {"resolution": np.nan}, {"resolution": 1.0, "rated": -1},
                {"resolution": 1.0, "gear": 0.0}):
        with pytest.raises(DriveConfigError, match="scaling"):
            Scaling(**bad)


def test_microseconds_unwrap_across_the_32_bit_wrap():
    stamps = (np.arange(5) * 2000 + 2**32 - 3000) % 2**32
    assert np.allclose(unwrap_microseconds(stamps), np.arange(5) * 2e-3)


def test_default_dictionary_holds_every_mapped_and_required_object():
    od = cia402_dictionary(5)
    for index, sub, code in OBJECTS.values():
        var = od[index] if sub == 0 else od[index][sub]
        assert len(var) == 8 * struct.calcsize(code)
        assert var.pdo_mappable
    assert all(i in od for i in REQUIRED)
    assert od[0x1800][1].default == 0x80000000 | 0x185   # TPDO1 of node 5, disabled
    assert od[0x1000].default & 0xFFFF == 0x0192           # CiA 402 device
    with pytest.raises(DriveConfigError, match="1 to 127"):
        cia402_dictionary(128)


def test_load_dictionary_checks_the_file(tmp_path):
    with pytest.raises(DriveConfigError, match="no such file"):
        load_dictionary(tmp_path / "drive.eds", 1)
    bad = tmp_path / "bad.eds"
    bad.write_text("[garbage\nthis is not an EDS")
    with pytest.raises(DriveConfigError, match="cannot be read"):
        load_dictionary(bad, 1)
    # An EDS written from the default dictionary reads back; one without 0x6078 is refused.
    eds = tmp_path / "drive.eds"
    canopen.export_od(cia402_dictionary(1), str(eds), doc_type="eds")
    assert 0x6078 in load_dictionary(eds, 1, PdoMapping.default())
    od = cia402_dictionary(1)
    del od[0x6078]
    canopen.export_od(od, str(eds), doc_type="eds")
    with pytest.raises(DriveConfigError, match="0x6078 current"):
        load_dictionary(eds, 1, PdoMapping.default())


def test_drive_settings_from_robot_and_file(tmp_path):
    robot = load_robot("ariane")
    s = DriveSettings.defaults(robot, rate=500.0)
    assert s.node_ids == (1, 2, 3) and s.mapping.output == "current"
    assert s.scalings[0].resolution == pytest.approx(2 * np.pi / 24)
    assert s.timeout == pytest.approx(0.1)
    f = tmp_path / "drives.yaml"
    f.write_text("rate: 1000\nfollowing_error: 0.1\ndrives:\n"
                 "  - {node: 4, increments_per_turn: 4096, gear_ratio: 2, rated: 3.0}\n"
                 "  - {node: 5, resolution: 0.001}\n  - {node: 6}\n")
    s = DriveSettings.from_file(f, robot)
    assert s.node_ids == (4, 5, 6) and s.rate == 1000.0
    assert s.scalings[0].resolution == pytest.approx(2 * np.pi / 8192)
    assert s.scalings[0].rated == 3.0 and not s.nodes[0].rated_from_drive
    assert s.nodes[1].rated_from_drive
    for text, match in (("drives: [{node: 1}]", "1 drives for the 3 actuators"),
                        ("drives: [{node: 1}, {node: 1}, {node: 2}]", "must differ"),
                        ("drives: [{node: 1}, {node: 2}, {node: 300}]", "1 to 127"),
                        ("drives: [{node: 1}, {node: 2}, {node: 3, colour: red}]",
                         "unknown keys"),
                        ("rate: -5\ndrives: [{node: 1}, {node: 2}, {node: 3}]", "rate"),
                        ("nodes: 3", "'drives' list"),
                        ("drives: [{node: 1}, {node: 2}, {node: 3, "
                         "increments_per_turn: 0}]", "drive 3")):
        f.write_text(text)
        with pytest.raises(DriveConfigError, match=match):
            DriveSettings.from_file(f, robot)


def test_bus_settings_follow_python_can_configuration(tmp_path, monkeypatch):
    monkeypatch.setenv("CAN_INTERFACE", "virtual")
    monkeypatch.setenv("CAN_CHANNEL", "from-env")
    monkeypatch.setenv("CAN_BITRATE", "500000")
    s = BusSettings.load()
    assert (s.interface, s.channel, s.bitrate) == ("virtual", "from-env", 500000.0)
    assert BusSettings.load(channel="given").channel == "given"  # arguments win
    conf = tmp_path / "can.ini"
    conf.write_text("[default]\ninterface = virtual\nchannel = from-file\nbitrate = 250000\n"
                    "fd = true\ndata_bitrate = 2000000\n")
    monkeypatch.delenv("CAN_CHANNEL")
    monkeypatch.delenv("CAN_BITRATE")
    s = BusSettings.load(path=conf)
    assert (s.channel, s.bitrate, s.fd, s.data_bitrate) == ("from-file", 250000.0, True, 2e6)
    with pytest.raises(DriveConfigError, match="without fd"):
        BusSettings(data_bitrate=2e6)
    with pytest.raises(DriveConfigError, match="bitrate"):
        BusSettings(bitrate=0)
    with pytest.raises(DriveConfigError, match="no such file"):
        BusSettings.load(path=tmp_path / "none.ini")
