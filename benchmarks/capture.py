"""Capture on the simulated robot: the Panda's 7 CiA 402 drives on python-can's virtual bus.

The master (dynid's CiA 402 drives, one process) and the simulated drives (stepping the robot's
dynamics on each SYNC) share this machine's cores, so the sustained rate is a lower bound of
what the master alone sustains on a real bus. The runs use CAN FD (1 Mbit/s arbitration,
5 Mbit/s data) with the default mapping: target position and torque offset in one receive
PDO, position, torque and drive time stamp in one transmit PDO per drive. One run asks for
500 Hz, one for 1 kHz (more than the two processes sustain: it measures the most they do, the
capture waiting for every answer rather than stopping when the simulated drives fall behind).

Prints one ``name: value`` line per figure:

* ``capture_7_drives_cycle_rate_hz``: cycles per second of wall-clock time, 500 Hz asked;
* ``capture_7_drives_jitter_p99_ms``: 99th percentile of |cycle period − 2 ms| in that run;
* ``capture_7_drives_dropped_cycles``: cycles whose feedback came too late in that run;
* ``capture_bus_load_pct``: worst-case bus load of that cycle at 500 Hz;
* ``capture_7_drives_max_cycle_rate_hz``: cycles per second when 1 kHz is asked;
* ``capture_7_drives_classic_max_rate_hz``: the highest rate the same drives fit on classic
  CAN at 1 Mbit/s (default mapping with its second transmit PDO for the time stamp).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from dynid.hardware import (
    BusSettings,
    BusTiming,
    Cycle,
    DriveSettings,
    FourierReference,
    PdoMapping,
    bus_load,
    capture,
    max_rate,
    smooth_coulomb,
)
from dynid.hardware.virtual import VirtualRobot
from dynid.models import load_robot


def run(robot, trajectory, rate: float, lockstep: bool = False):
    bus = BusSettings(interface="virtual", channel="dynid-bench", fd=True, data_bitrate=5e6)
    settings = DriveSettings.defaults(robot, rate=rate, fd=True)
    if lockstep:  # the capture waits for every answer: the rate is what the two sustain
        settings = VirtualRobot.lockstep(settings)
    with tempfile.TemporaryDirectory() as folder, \
            VirtualRobot.for_capture(robot, settings, bus, seed=0):
        result = capture(robot, trajectory, Path(folder) / "run.csv", settings=settings,
                         bus=bus, progress=False)
    return result, settings


def main() -> None:
    robot = smooth_coulomb(load_robot("panda"), joint=0.05)
    trajectory = FourierReference.random(robot, harmonics=4, frequency=0.25, ramp=1.0, seed=2)
    result, settings = run(robot, trajectory, 500.0)
    fastest, _ = run(robot, trajectory, 1000.0, lockstep=True)
    m = settings.mapping
    cycle = Cycle(drives=robot.n, rpdo_bytes=m.rpdo_bytes, tpdo_bytes=m.tpdo_bytes)
    load = bus_load(cycle, BusTiming(fd=True, data_bitrate=5e6), 500.0)
    classic = PdoMapping.default("torque")
    classic_cycle = Cycle(drives=robot.n, rpdo_bytes=classic.rpdo_bytes,
                          tpdo_bytes=classic.tpdo_bytes)
    print(f"capture_7_drives_cycle_rate_hz: {result.rate:.0f}")
    print(f"capture_7_drives_jitter_p99_ms: {result.jitter_p99 * 1e3:.3f}")
    print(f"capture_7_drives_dropped_cycles: {result.dropped}")
    print(f"capture_bus_load_pct: {100 * load:.1f}")
    print(f"capture_7_drives_max_cycle_rate_hz: {fastest.rate:.0f}")
    print(f"capture_7_drives_classic_max_rate_hz: {max_rate(classic_cycle, BusTiming()):.0f}")


if __name__ == "__main__":
    main()
