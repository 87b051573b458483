"""The simulated robot as CiA 402 drives on python-can's virtual bus, seen by a master built
from canopen's RemoteNode (SDO, NMT, emergencies) and raw python-can frames (the cycle)."""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

import can
import canopen
import numpy as np
import pytest
from canopen.profiles.p402 import State402
from conftest import DATA

import dynid
from dynid.errors import DriveConfigError, HardwareError, ModelError
from dynid.hardware import (
    BusSettings,
    DriveSettings,
    FourierReference,
    NodeSettings,
    capture,
)
from dynid.hardware.cia402 import map_pdos
from dynid.hardware.dictionary import cia402_dictionary
from dynid.hardware.pdo import OBJECTS, PdoMapping, Scaling, unwrap_microseconds
from dynid.hardware.plant import Plant
from dynid.hardware.sensors import SensorNoise
from dynid.hardware.virtual import Faults, VirtualRobot

_channels = itertools.count()
#: Target in; position and torque, then statusword and drive time stamp out.
MAPPING = PdoMapping(rpdos=[["target_position"]],
                     tpdos=[["position", "torque"], ["statusword", "timestamp"]])


def arm() -> dynid.Robot:
    return dynid.load_robot(DATA / "arm2.yaml")


def state_of(statusword: int) -> str:
    states = [s for s, (mask, value) in State402.SW_MASK.items() if statusword & mask == value]
    assert len(states) == 1, f"statusword 0x{statusword:04X} matches {states}"
    return states[0]


def emergency(node, code: int):
    """The emergency ``code`` of ``node`` received within a second."""
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        found = [e for e in node.emcy.log if e.code == code]
        if found:
            return found[-1]
        time.sleep(1e-3)
    pytest.fail(f"node {node.id}: no emergency 0x{code:04X}; received "
                f"{[hex(e.code) for e in node.emcy.log]}")


class Master:
    """A minimal CiA 402 master: canopen RemoteNodes for SDO/NMT/EMCY, a raw python-can bus
    for the cyclic exchange."""

    def __init__(self, sim: VirtualRobot, mapping: PdoMapping):
        self.sim, self.mapping = sim, mapping
        self.network = canopen.Network()
        self.network.NOTIFIER_CYCLE = 0.05
        self.network.connect(interface="virtual", channel=sim.channel)
        self.nodes = []
        for node_id in sim.node_ids:
            node = self.network.add_node(node_id, cia402_dictionary(node_id))
            # One try, but long enough for a simulated node on a busy machine.
            node.sdo.RESPONSE_TIMEOUT, node.sdo.MAX_RETRIES = 1.0, 1
            self.nodes.append(node)
        self.bus = can.Bus(interface="virtual", channel=sim.channel)
        self.ids = {PdoMapping.tpdo_id(node, k): (j, k) for j, node in enumerate(sim.node_ids)
                    for k in range(len(mapping.tpdos))}

    def close(self) -> None:
        self.bus.shutdown()
        self.network.disconnect()

    def start(self, enable: bool = True) -> np.ndarray:
        """Map, select CSP, start the nodes, walk to OPERATION ENABLED; the positions."""
        for node in self.nodes:
            map_pdos(node, self.mapping)
            node.sdo[0x6060].raw = 8
            node.nmt.state = "OPERATIONAL"
        if enable:
            for node in self.nodes:
                for word in (State402.CW_SHUTDOWN, State402.CW_SWITCH_ON,
                             State402.CW_OPERATION_ENABLED):
                    node.sdo[0x6040].raw = word
        return np.array([node.sdo[0x6064].raw for node in self.nodes])

    def cycle(self, targets=None, *, velocity=None, torque=None, expect: bool = True,
              pause: float = 0.0) -> dict:
        """Receive PDOs (targets, velocity and torque offsets in drive units), SYNC, and the
        transmit PDOs of that SYNC: (drive, pdo) → values."""
        if targets is not None:
            for j, node in enumerate(self.sim.node_ids):
                payloads = self.mapping.encode({
                    "target_position": int(targets[j]), "controlword": 0x0F,
                    "velocity_offset": 0 if velocity is None else int(velocity[j]),
                    "torque_offset": 0 if torque is None else int(torque[j])})
                for k, data in enumerate(payloads):
                    self.bus.send(can.Message(arbitration_id=PdoMapping.rpdo_id(node, k),
                                              data=data, is_extended_id=False))
                    time.sleep(pause * np.random.default_rng().random())
        handled = self.sim.handled
        self.bus.send(can.Message(arbitration_id=0x80, data=b"", is_extended_id=False))
        deadline = time.monotonic() + 2.0
        while self.sim.handled == handled and expect:
            assert time.monotonic() < deadline, "the virtual drives did not answer the SYNC"
            time.sleep(1e-4)
        out = {}
        while (message := self.bus.recv(timeout=0.0)) is not None:
            if message.arbitration_id in self.ids:
                j, k = self.ids[message.arbitration_id]
                out[j, k] = self.mapping.decode(k, message.data)
                out[j, k, "fd"] = message.is_fd
        return out


@pytest.fixture
def run():
    """Start a VirtualRobot and a Master on a fresh channel; both closed afterwards."""
    opened = []

    def make(robot=None, mapping=None, **kwargs):
        sim = VirtualRobot(robot or arm(), channel=f"test-virtual-{next(_channels)}", **kwargs)
        sim.start()
        master = Master(sim, mapping or MAPPING)
        opened.append((sim, master))
        return sim, master

    yield make
    for sim, master in opened:
        master.close()
        sim.stop()
        sim.check()


def test_sdo_reads_the_dictionary(run):
    robot = dynid.load_robot("ariane")
    sim, master = run(robot, PdoMapping.default("current"))
    truth = robot.transmission.actuator_state(sim.plant.q, sim.plant.v, sim.plant.a)[0][0]
    for j, node in enumerate(master.nodes):
        assert node.sdo[0x1000].raw & 0xFFFF == 0x0192          # CiA 402
        assert node.sdo[0x6075].raw == round(sim.scalings[j].rated * 1000)   # mA
        assert node.sdo[0x6076].raw == 0                      # the model's output is current
        assert node.sdo[0x6502].raw == 1 << 7                 # cyclic synchronous position
        assert state_of(node.sdo[0x6041].raw) == "SWITCH ON DISABLED"
        assert node.sdo[0x6065].raw == 0xFFFFFFFF
        assert node.sdo[0x6064].raw == sim.scalings[j].to_counts(truth[j])
    # Ariane's encoders: 24 increments per motor turn.
    assert sim.scalings[0].resolution == pytest.approx(2 * np.pi / 24)
    node = master.nodes[0]
    assert node.sdo[0x6061].raw == 0
    with pytest.raises(canopen.SdoAbortedError) as info:
        node.sdo[0x6060].raw = 1                              # profile position: refused
    assert info.value.code == 0x06090030
    node.sdo[0x6060].raw = 8
    assert node.sdo[0x6061].raw == 8


def test_boot_up():
    sim = VirtualRobot(arm(), channel=f"test-virtual-{next(_channels)}", node_ids=[5, 9])
    assert {d.state for d in sim.drives} == {"NOT READY TO SWITCH ON"}
    listener = can.Bus(interface="virtual", channel=sim.channel)
    try:
        with sim:
            frames = [listener.recv(timeout=1.0) for _ in range(2)]
            assert {d.state for d in sim.drives} == {"SWITCH ON DISABLED"}
            assert {d.node.nmt.state for d in sim.drives} == {"PRE-OPERATIONAL"}
    finally:
        listener.shutdown()
    assert [(f.arbitration_id, bytes(f.data)) for f in frames] == [(0x705, b"\0"),
                                                                    (0x709, b"\0")]


def test_stopped_drives_start_again(run):
    sim, master = run(faults=Faults(cut_at=2, cut_drive=1))
    hold = master.start()
    for _ in range(3):
        master.cycle(hold)
    master.close()
    sim.stop()
    sim.start()                                  # a power cycle: the cable is whole again
    master = Master(sim, MAPPING)
    try:
        assert [state_of(node.sdo[0x6041].raw) for node in master.nodes] == \
            ["SWITCH ON DISABLED"] * 2
        hold = master.start()
        frames = master.cycle(hold)
        assert all((j, k) in frames for j in (0, 1) for k in (0, 1))
    finally:
        master.close()


def test_default_rated_value_is_half_the_largest_need():
    robot = arm()
    sim = VirtualRobot(robot, channel="unused")
    # Independent: held horizontal and straight, the arm needs m g r of its links on the
    # shoulder (11.8 N·m); at 2 rad/s, viscous friction (0.2 N·m) and the centrifugal terms
    # (under m2 l1 r2 v² = 0.4 N·m on each joint) add little; the rule takes half the largest.
    shoulder = 9.81 * (2.0 * 0.25 + 1.0 * (0.5 + 0.2))
    rated = np.array([sc.rated for sc in sim.scalings])
    assert 0.8 * shoulder / 2 < rated[0] <= (shoulder + 0.2 + 2 * 0.4) / 2
    assert np.all(rated * 1000 == np.round(rated * 1000))
    assert sim.scalings[0].resolution == pytest.approx(2 * np.pi / 2**16)


@pytest.mark.parametrize("fd", [False, True])
def test_mapping_written_by_the_master_is_what_the_drives_send(run, fd):
    tpdos = ([["statusword", "position", "velocity", "torque", "timestamp"]] if fd
             else [["position", "torque"], ["statusword", "timestamp"]])
    mapping = PdoMapping(rpdos=[["target_position"]], tpdos=tpdos, fd=fd)
    sim, master = run(mapping=mapping, fd=fd)
    hold = master.start()
    frames = [master.cycle(hold) for _ in range(3)]
    truth = sim.truth
    for j, node in enumerate(sim.node_ids):
        for k in range(len(tpdos)):
            assert all((j, k) in f for f in frames), f"node {node} TPDO{k + 1} missing"
            assert frames[0][j, k, "fd"] is fd
        values = {**frames[-1][j, 0], **frames[-1].get((j, 1), {})}
        assert state_of(values["statusword"]) == "OPERATION ENABLED"
        expected = sim.scalings[j].to_counts(truth.actuator[-1, j])
        assert abs(values["position"] - expected) <= 1
    local = sim.drives[0].node
    local.tpdo.read()
    assert [[v.index for v in local.tpdo[k + 1].map] for k in range(len(tpdos))] == \
        [[OBJECTS[o][0] for o in p] for p in tpdos]


def test_a_drive_refuses_a_mapping_it_cannot_run(run):
    sim, master = run(dynid.load_robot("ariane"), PdoMapping.default("torque"))
    node = master.nodes[1]
    map_pdos(node, master.mapping)  # the torque actual value: Ariane's drives measure current
    node.sdo[0x6060].raw = 8
    node.nmt.state = "OPERATIONAL"
    assert emergency(node, 0x8200).data[:3] == bytes([0x77, 0x60, 0x00])
    assert "0x6077:0" in sim.drives[1].refused
    assert sim.drives[1].node.nmt.state == "PRE-OPERATIONAL"
    # An object the simulation does not produce (the error code) is refused alike.
    pdo = master.nodes[0].tpdo[1]
    master.nodes[0].tpdo.read()
    pdo.clear()
    pdo.add_variable(0x603F)
    pdo.trans_type, pdo.enabled = 1, True
    pdo.save()
    master.nodes[0].nmt.state = "OPERATIONAL"
    assert emergency(master.nodes[0], 0x8200).data[:3] == bytes([0x3F, 0x60, 0x00])
    assert "0x603F:0" in sim.drives[0].refused


# The 402 state machine -----------------------------------------------------------------------
_PATHS = {"SWITCH ON DISABLED": [], "READY TO SWITCH ON": [0x06],
          "SWITCHED ON": [0x06, 0x07], "OPERATION ENABLED": [0x06, 0x07, 0x0F],
          "QUICK STOP ACTIVE": [0x06, 0x07, 0x0F, 0x02]}


def expected_state(state: str, word: int) -> str:
    """The standard's answer, from canopen's table of the 402 state machine and CiA 402's
    notes on it: a quick stop also takes transitions 7 and 10; transition 16 needs quick stop
    option codes 5 to 8 (the drives use 2)."""
    if word == State402.CW_QUICK_STOP and state in ("READY TO SWITCH ON", "SWITCHED ON"):
        return "SWITCH ON DISABLED"
    if state == "QUICK STOP ACTIVE" and word == State402.CW_OPERATION_ENABLED:
        return state
    targets = [to for (frm, to), w in State402.TRANSITIONTABLE.items()
               if frm == state and w == word]
    return targets[0] if targets else state


def test_every_transition_of_the_state_machine(run):
    sim, master = run()
    node = master.nodes[0]
    node.sdo[0x6060].raw = 8
    words = sorted(State402.CW_CODE_COMMANDS)
    checked = 0
    for state in [*_PATHS, "FAULT"]:
        for word in words:
            node.sdo[0x6040].raw = State402.CW_DISABLE_VOLTAGE
            if state == "FAULT":
                sim.drives[0].fault(0x2310)
            for step in _PATHS.get(state, []):
                node.sdo[0x6040].raw = step
            assert state_of(node.sdo[0x6041].raw) == state
            node.sdo[0x6040].raw = word
            assert state_of(node.sdo[0x6041].raw) == expected_state(state, word), \
                f"{state} + controlword 0x{word:02X}"
            checked += 1
    assert checked == 6 * len(words)
    assert node.sdo[0x6041].raw & 0x0200                     # remote


def test_enable_operation_needs_the_cyclic_synchronous_position_mode(run):
    _, master = run()
    node = master.nodes[0]
    for word in (0x06, 0x07, 0x0F):
        node.sdo[0x6040].raw = word
    assert state_of(node.sdo[0x6041].raw) == "SWITCHED ON"
    node.sdo[0x6060].raw = 8
    node.sdo[0x6040].raw = 0x0F
    assert state_of(node.sdo[0x6041].raw) == "OPERATION ENABLED"


def test_fault_reset_on_a_rising_edge_only(run):
    sim, master = run()
    node = master.nodes[0]
    node.sdo[0x6040].raw = 0x80                 # bit 7 already set when the fault comes
    sim.drives[0].fault(0x2310)
    assert emergency(node, 0x2310).register == 0x03           # generic + current
    assert (node.sdo[0x603F].raw, node.sdo[0x1001].raw) == (0x2310, 0x03)
    node.sdo[0x6040].raw = 0x80                 # no edge: still in FAULT
    assert state_of(node.sdo[0x6041].raw) == "FAULT"
    node.sdo[0x6040].raw = 0x00
    assert state_of(node.sdo[0x6041].raw) == "FAULT"
    node.sdo[0x6040].raw = 0x80                 # rising edge: reset
    assert state_of(node.sdo[0x6041].raw) == "SWITCH ON DISABLED"
    assert (node.sdo[0x603F].raw, node.sdo[0x1001].raw) == (0, 0)
    emergency(node, 0x0000)                                   # the emergency reset


# The cyclic exchange -------------------------------------------------------------------------
@pytest.mark.parametrize("offsets", [False, True])
def test_a_smooth_motion_reports_the_true_positions_and_outputs(run, offsets):
    rpdos = [["target_position", "velocity_offset"], ["torque_offset"]] if offsets else \
        [["target_position"]]
    mapping = PdoMapping(rpdos=rpdos, tpdos=MAPPING.tpdos)
    sim, master = run(mapping=mapping, rate=400.0)
    hold = master.start()
    k = np.arange(240)[:, None]
    targets = hold + np.round(3000 * np.sin(np.pi * k / 120) ** 2)
    speeds = np.round(3000 * np.pi / 120 * np.sin(2 * np.pi * k / 120) * 400.0) * [1, 1]
    torques = np.round(200 * np.sin(np.pi * k / 60)) * [1, -1]        # thousandths of rated
    frames = [master.cycle(target, velocity=speed, torque=torque)
              for target, speed, torque in zip(targets, speeds, torques, strict=True)]
    truth = sim.truth
    assert len(truth.time) == 240 and np.all(truth.moving[:-1])
    np.testing.assert_allclose(np.diff(truth.time), 1 / 400.0, rtol=1e-12)
    for j, sc in enumerate(sim.scalings):
        position = np.array([f[j, 0]["position"] for f in frames])
        torque = np.array([f[j, 0]["torque"] for f in frames])
        stamps = np.array([f[j, 1]["timestamp"] for f in frames])
        # Noise-free encoders on the scaling's resolution: the increments of the true position.
        assert np.max(np.abs(position - sc.to_counts(truth.actuator[:, j]))) <= 1
        assert np.max(np.abs(torque - sc.to_output(truth.output[:, j]))) <= 1
        assert np.all((np.diff(stamps) % 2**32) == 2500)      # µs, whatever the offset
        np.testing.assert_allclose(unwrap_microseconds(stamps), truth.time - truth.time[0])
        assert (position - hold[j]).max() > 300                # the axis moved
    # The same plant stepped directly with the targets in SI units moves exactly as the
    # robot behind the bus did. Velocity feed-forward: the velocity offset where it is
    # mapped, else the targets' differences over the period; output feed-forward: the
    # torque offset in thousandths of the rated torque.
    plant = Plant.commissioned(sim.robot, sim.theta, control_rate=400.0, seed=sim.seed)
    res = np.array([sc.resolution for sc in sim.scalings])
    rated = np.array([sc.rated for sc in sim.scalings])
    si = targets * res
    plant.sense()                                   # the drives' first reading, at boot
    for k in range(239):
        np.testing.assert_allclose(plant.q[0], truth.q[k], rtol=0, atol=1e-12)
        plant.sense()
        if offsets:
            plant.step(si[k], speeds[k] * res, torques[k] * rated / 1000)
        else:
            plant.step(si[k], np.zeros(2) if k == 0 else (si[k] - si[k - 1]) * 400.0)
    q_m = sim.robot.transmission.actuator_state(truth.q, truth.v, truth.a)[0]
    np.testing.assert_allclose(q_m, truth.actuator, atol=1e-12)


def test_noisy_encoders_stay_within_their_noise(run):
    step = 2 * np.pi / 2**16
    sim, master = run(noise=SensorNoise(position_std=3 * step, output_std=0.01), seed=4)
    hold = master.start()
    frames = [master.cycle(hold + 10 * k) for k in range(100)]
    truth = sim.truth
    error = np.array([[f[j, 0]["position"] for j in range(2)] for f in frames]) - \
        np.column_stack([sc.to_counts(truth.actuator[:, j])
                         for j, sc in enumerate(sim.scalings)])
    assert np.max(np.abs(error)) <= 1 + 5 * 3
    assert 1.5 < np.std(error) < 4.5                         # 3 increments of noise


def test_two_runs_with_the_same_seed_give_the_same_frames(run):
    noise = SensorNoise(position_std=1e-4, output_std=0.05)
    runs = []
    for pause in (0.0, 2e-3):
        sim, master = run(noise=noise, seed=7, faults=Faults(drop=0.1))
        hold = master.start()
        frames = [master.cycle(hold + 20 * k, pause=pause) for k in range(60)]
        runs.append((frames, sim.truth))
    (first, truth_1), (second, truth_2) = runs
    assert first == second
    np.testing.assert_array_equal(truth_1.q, truth_2.q)
    np.testing.assert_array_equal(truth_1.output, truth_2.output)
    sim, master = run(noise=noise, seed=8, faults=Faults(drop=0.1))
    hold = master.start()
    assert [master.cycle(hold + 20 * k) for k in range(60)] != first


# Faults --------------------------------------------------------------------------------------
def test_lost_frames_at_the_stated_rate(run):
    _, master = run(faults=Faults(drop=0.25), seed=3)
    hold = master.start()
    received = sum(len([key for key in master.cycle(hold) if len(key) == 2])
                   for _ in range(200))
    sent = 200 * 2 * 2
    # Binomial(800, 0.75): mean 600, standard deviation 12.2.
    assert abs(received - 0.75 * sent) < 5 * np.sqrt(sent * 0.25 * 0.75)


def test_late_answers_come_after_the_delay(run):
    _, master = run(faults=Faults(delay=0.03))
    hold = master.start()
    master.cycle(hold)
    time.sleep(0.05)
    while master.bus.recv(timeout=0.0) is not None:
        pass
    master.bus.send(can.Message(arbitration_id=0x80, data=b"", is_extended_id=False))
    sent = time.monotonic()
    message = master.bus.recv(timeout=1.0)
    assert message is not None and time.monotonic() - sent >= 0.03 - 1e-3


def test_a_drive_fault_stops_the_motion_and_sends_an_emergency(run):
    sim, master = run(faults=Faults(fault_at=20, fault_drive=1))
    hold = master.start()
    frames = [master.cycle(hold + 50 * k) for k in range(40)]
    node = master.nodes[1]
    assert emergency(node, 0x2310).register == 0x03
    assert (node.sdo[0x603F].raw, node.sdo[0x1001].raw) == (0x2310, 0x03)
    status = [state_of(f[1, 1]["statusword"]) for f in frames]
    assert status[:20] == ["OPERATION ENABLED"] * 20 and set(status[20:]) == {"FAULT"}
    truth = sim.truth
    assert np.all(truth.moving[:20]) and not np.any(truth.moving[20:])
    np.testing.assert_array_equal(truth.q[21:], np.repeat(truth.q[21:22], 19, axis=0))
    assert np.all(truth.output[21:] == 0)
    # Every drive keeps reporting its position, with zero output.
    for j in range(2):
        assert all((j, 0) in f for f in frames)
        assert all(f[j, 0]["torque"] == 0 for f in frames[21:])
    # The arm is held: a quick stop of the other drive ends at once.
    master.nodes[0].sdo[0x6040].raw = State402.CW_QUICK_STOP
    assert state_of(master.nodes[0].sdo[0x6041].raw) == "QUICK STOP ACTIVE"
    assert state_of(master.cycle(hold)[0, 1]["statusword"]) == "SWITCH ON DISABLED"


def test_a_cut_cable_silences_one_drive(run):
    sim, master = run(faults=Faults(cut_at=10, cut_drive=0))
    hold = master.start()
    frames = [master.cycle(hold + 50 * k) for k in range(20)]
    assert all((0, 0) in f for f in frames[:10]) and not any((0, 0) in f for f in frames[10:])
    assert all((1, 0) in f for f in frames)
    with pytest.raises(canopen.SdoCommunicationError):
        _ = master.nodes[0].sdo[0x6041].raw
    assert state_of(master.nodes[1].sdo[0x6041].raw) == "OPERATION ENABLED"
    assert np.all(sim.truth.moving)                # the cut drive holds its last target


def test_following_error_window(run):
    _, master = run()
    hold = master.start()
    node = master.nodes[0]
    node.sdo[0x6065].raw = 200                                 # increments
    for _ in range(5):
        master.cycle(hold)
    assert state_of(node.sdo[0x6041].raw) == "OPERATION ENABLED"
    frames = [master.cycle(hold + np.array([5000, 0])) for _ in range(3)]
    assert emergency(node, 0x8611).register == 0x21           # generic + device profile
    assert node.sdo[0x603F].raw == 0x8611
    assert state_of(frames[-1][0, 1]["statusword"]) == "FAULT"
    assert state_of(master.nodes[1].sdo[0x6041].raw) == "OPERATION ENABLED"


def test_quick_stop_brings_the_axes_to_rest(run):
    sim, master = run()
    hold = master.start()
    for k in range(100):
        master.cycle(hold + 40 * k)
    for node in master.nodes:
        node.sdo[0x6040].raw = State402.CW_QUICK_STOP
        assert state_of(node.sdo[0x6041].raw) in ("QUICK STOP ACTIVE", "SWITCH ON DISABLED")
    k0 = sim.handled
    for k in range(100, 1200):                # the master keeps sending: targets ignored
        frames = master.cycle(hold + 40 * k)
        if all(state_of(frames[j, 1]["statusword"]) == "SWITCH ON DISABLED" for j in (0, 1)):
            break
    else:
        pytest.fail("the drives did not finish their quick stop")
    truth = sim.truth
    stopping = truth.moving[k0:]
    assert 0 < stopping.sum() < 2.0 * sim.rate                # at rest before the time-out
    last = k0 + np.flatnonzero(stopping)[-1]                  # the last period that moved
    speed = sim.robot.transmission.actuator_state(truth.q, truth.v, truth.a)[1]
    res = np.array([sc.resolution for sc in sim.scalings])
    rest = res * sim.rate
    assert np.all(np.abs(speed[last]) < rest)                  # one increment per period
    assert np.all(np.abs(speed[k0]) > 20 * rest)              # it was moving when stopped
    # Held after the stop: the positions no longer change.
    master.cycle(hold)
    after = sim.truth
    np.testing.assert_array_equal(after.q[-1], after.q[last + 1])
    # It stopped about where the quick stop came, far from the targets that went on moving.
    from_stop = np.abs(after.actuator[-1] - truth.actuator[k0])
    from_targets = np.abs(after.actuator[-1] - (hold + 40 * k) * res)
    assert np.all(from_stop < from_targets / 5)


# Bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    (dict(node_ids=[0, 1]), r"node_ids\[0\]: expected a node ID from 1 to 127, found 0"),
    (dict(node_ids=[1, 128]), r"node_ids\[1\].*found 128"),
    (dict(node_ids=[3, 3]), r"node IDs \[3\] are given twice"),
    (dict(node_ids=[1]), r"one node ID per actuator \(2\), found 1"),
    (dict(node_ids=[True, 2]), r"node_ids\[0\]"),
    (dict(scalings=[Scaling(1e-4)]), r"one Scaling per actuator \(2\), found 1"),
    (dict(scalings=[Scaling(1e-4), 1e-4]), r"scalings\[1\]: expected a Scaling, found float"),
    (dict(rate=0.0), r"rate: expected the SYNC rate in Hz > 0, found 0.0"),
    (dict(rate=float("nan")), r"rate: .* found nan"),
    (dict(faults=Faults(fault_at=3, fault_drive=2)), r"faults.fault_drive: .* 0 to 1, found 2"),
    (dict(faults="drop"), r"faults: expected a Faults"),
])
def test_bad_settings(kwargs, match):
    with pytest.raises(DriveConfigError, match=match):
        VirtualRobot(arm(), channel="unused", **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(drop=1.5), r"faults.drop: expected a probability from 0 to 1, found 1.5"),
    (dict(delay=-1.0), r"faults.delay: expected seconds"),
    (dict(fault_at=-2), r"faults.fault_at: expected a whole number ≥ 0, found -2"),
    (dict(cut_drive=1.5), r"faults.cut_drive"),
    (dict(fault_code=0x10), r"faults.fault_code"),
])
def test_bad_faults(kwargs, match):
    with pytest.raises(DriveConfigError, match=match):
        Faults(**kwargs)


def test_unknown_robot():
    with pytest.raises(ModelError, match="robot 'nope'"):
        VirtualRobot("nope")
    with pytest.raises(DriveConfigError, match=r"robot: expected a dynid Robot .* found int 7"):
        VirtualRobot(7)
    assert VirtualRobot("ariane", channel="unused").robot.name == "ariane"


def test_a_scaling_too_fine_for_the_positions():
    with pytest.raises(DriveConfigError, match=r"position of node 1: .* beyond the drive's "
                       r"32-bit position range at 1e-12 per increment"):
        VirtualRobot(arm(), channel="unused", q0=[0.5, 0.5],
                     scalings=[Scaling(1e-12, rated=5.0)] * 2)


def test_errors_met_at_a_sync_are_raised_by_check(run):
    sim, master = run(q0=[0.5, 0.5])
    hold = master.start()
    sim._res[:] = 1e-12                 # positions no longer fit 32-bit increments
    master.cycle(hold, expect=False)
    deadline = time.monotonic() + 1.0
    while not sim.errors and time.monotonic() < deadline:
        time.sleep(1e-3)
    with pytest.raises(HardwareError, match="32-bit position range"):
        sim.check()
    sim.errors.clear()


# With the capture ----------------------------------------------------------------------------
def arm_settings(rate: float = 250.0) -> DriveSettings:
    """The arm's drives at nodes 1 and 2, 2¹⁶ increments per motor turn, rated values read
    from the drives, the default mapping (torque offset in; position, torque, time out)."""
    nodes = [NodeSettings(j, Scaling.from_turn(2**16), rated_from_drive=True) for j in (1, 2)]
    return DriveSettings(nodes, PdoMapping.default("torque"), rate=rate)


def test_a_capture_through_the_cia402_master_records_what_the_robot_did(tmp_path):
    robot = arm()
    reference = FourierReference.random(robot, harmonics=2, frequency=1.0, fill=0.3, ramp=0.2,
                                        seed=1)
    # Lockstep: the capture waits for the simulated drives' answers, which come late on a busy
    # machine (the simulation shares the process and is not real time).
    settings = VirtualRobot.lockstep(replace(arm_settings(rate=250.0), following_error=0.5))
    bus = BusSettings(channel=f"test-virtual-{next(_channels)}")
    with VirtualRobot.for_capture(robot, settings, bus, seed=2) as sim:
        result = capture(robot, reference, tmp_path / "run.csv", settings=settings, bus=bus,
                         min_ramp=0.3, progress=False)
    rec = dynid.read_csv(tmp_path / "run.csv")
    n = len(rec.time)
    assert result.samples == n == round(reference.duration * 250) + 1 and result.dropped == 0
    truth = sim.truth
    np.testing.assert_allclose(np.diff(rec.time), 1 / 250.0, rtol=1e-9)   # drive time stamps
    # The recorded samples are the truth at one alignment, sample by sample: the positions
    # within an increment, the output within a thousandth of the rated value.
    res = np.array([sc.resolution for sc in sim.scalings])
    rated = np.array([sc.rated for sc in sim.scalings])
    errors = [np.max(np.abs(rec.positions - truth.actuator[i:i + n]) / res)
              for i in range(len(truth.time) - n + 1)]
    i0 = int(np.argmin(errors))
    assert errors[i0] <= 1.0 and sorted(errors)[1] > 1.0
    assert np.all(np.abs(rec.output - truth.output[i0:i0 + n]) <= rated / 1000 * 0.51)
    assert np.all(truth.moving[i0:i0 + n])
    # The drives tracked the trajectory: a tenth of its range at most.
    q_m = robot.transmission.actuator_state(*reference.evaluate(rec.time))[0]
    assert np.all(np.abs(rec.positions - q_m).max(axis=0) < 0.1 * np.ptp(q_m, axis=0))


def test_for_capture_refuses_another_bus_or_robot():
    robot = arm()
    settings = arm_settings()
    with pytest.raises(DriveConfigError, match="virtual bus, found interface 'socketcan'"):
        VirtualRobot.for_capture(robot, settings, BusSettings(interface="socketcan"))
    with pytest.raises(DriveConfigError, match="3 drives for the 2 actuators"):
        VirtualRobot.for_capture(robot, DriveSettings.defaults(dynid.load_robot("ariane")),
                                 BusSettings())
    with pytest.raises(DriveConfigError, match="noise: expected a fraction"):
        VirtualRobot.for_capture(robot, settings, BusSettings(), noise=-1)
