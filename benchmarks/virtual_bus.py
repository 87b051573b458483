"""The simulated Panda as seven CiA 402 drives on python-can's virtual bus, against a minimal
master loop written with python-can alone.

The master maps the drives and enables them with ``canopen`` by SDO, then runs the cyclic
exchange on a raw python-can bus: each cycle it sends the seven receive PDOs (target
position and torque offset) and the SYNC, and waits for the fourteen transmit PDOs (position
and torque; time stamp) before the next cycle, as fast as both sides go. Prints
``name: value`` lines: the time the drives spend answering one SYNC (plant step included),
the sustained cycle rate of the whole loop, and, for scale, the time of one plant step alone.
Target: a sustained rate of at least 500 cycles per second.
"""

from __future__ import annotations

import time

import can
import canopen
import numpy as np
from canopen.profiles.p402 import State402

import dynid
from dynid.hardware.cia402 import map_pdos
from dynid.hardware.dictionary import cia402_dictionary
from dynid.hardware.pdo import PdoMapping
from dynid.hardware.plant import Plant
from dynid.hardware.virtual import VirtualRobot

CYCLES = 2000
CHANNEL = "dynid-benchmark"


def configure(mapping: PdoMapping, node_ids: list[int]) -> list[int]:
    """Map and enable the drives by SDO; return their positions (increments)."""
    network = canopen.Network().connect(interface="virtual", channel=CHANNEL)
    try:
        positions = []
        for node_id in node_ids:
            node = network.add_node(node_id, cia402_dictionary(node_id))
            map_pdos(node, mapping)
            node.sdo[0x6060].raw = 8
            node.nmt.state = "OPERATIONAL"
            for word in (State402.CW_SHUTDOWN, State402.CW_SWITCH_ON,
                         State402.CW_OPERATION_ENABLED):
                node.sdo[0x6040].raw = word
            positions.append(node.sdo[0x6064].raw)
        return positions
    finally:
        network.disconnect()


def run(sim: VirtualRobot, mapping: PdoMapping, positions: list[int]) -> float:
    """Seconds of ``CYCLES`` cycles of the raw master loop."""
    bus = can.Bus(interface="virtual", channel=CHANNEL)
    expected = len(positions) * len(mapping.tpdos)
    sync = can.Message(arbitration_id=0x80, data=b"", is_extended_id=False)
    try:
        start = time.perf_counter()
        for k in range(CYCLES):
            for j, node_id in enumerate(sim.node_ids):
                target = positions[j] + round(2000 * np.sin(2 * np.pi * k / 1000))
                values = {"target_position": target, "torque_offset": 0}
                for i, data in enumerate(mapping.encode(values)):
                    bus.send(can.Message(arbitration_id=PdoMapping.rpdo_id(node_id, i),
                                         data=data, is_extended_id=False))
            bus.send(sync)
            received = 0
            while received < expected:
                if bus.recv(timeout=1.0) is None:
                    raise RuntimeError(f"cycle {k}: {received} of {expected} frames")
                received += 1
        return time.perf_counter() - start
    finally:
        bus.shutdown()


def main() -> None:
    robot = dynid.load_robot("panda")
    mapping = PdoMapping.default("torque")
    with VirtualRobot(robot, channel=CHANNEL, rate=500.0) as sim:
        positions = configure(mapping, sim.node_ids)
        before, spent = sim.handled, sim.handling_time
        elapsed = run(sim, mapping, positions)
        time.sleep(0.1)                       # the last SYNC's handler finishes
        handled = sim.handled - before
        handling = (sim.handling_time - spent) / handled
    plant = Plant.commissioned(robot, robot.prior, control_rate=500.0)
    hold = plant.actuator_positions()[0].copy()
    start = time.perf_counter()
    for k in range(500):
        plant.step(hold + 0.01 * np.sin(2 * np.pi * k / 500))
    step = (time.perf_counter() - start) / 500
    print(f"virtual_7_drives_sync_handling_us: {handling * 1e6:.0f}")
    print(f"virtual_7_drives_max_cycle_rate_hz: {CYCLES / elapsed:.0f}")
    print(f"panda_plant_step_us: {step * 1e6:.0f}")
    print(f"# setting: virtual_7_drives_cycles = {handled}")


if __name__ == "__main__":
    main()
