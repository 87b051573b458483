"""Drive interfaces over CAN, simulated drives, capture.

Capture on CiA 402 drives (or on the simulated robot on python-can's virtual bus)::

    from dynid.hardware import BusSettings, DriveSettings, VirtualRobot, capture
    settings = DriveSettings.defaults(robot, rate=500)     # nodes 1..n, the robot's encoders
    with VirtualRobot.for_capture(robot, settings, BusSettings()):
        result = capture(robot, "excitation.json", "run.csv", settings=settings)
    rec = dynid.read_csv("run.csv")                        # the recording, ready to identify

The simulated robot: a reference motion, the drives' loops, the plant stepped one control
period at a time, and a batch simulation over it::

    from dynid.hardware import FourierReference, Plant, SensorNoise, simulate, smooth_coulomb
    robot = smooth_coulomb(dynid.load_robot("panda"), joint=0.05)   # smooth friction sign
    ref = FourierReference.random(robot, harmonics=5, frequency=0.2, seed=1)
    sim = simulate(robot, robot.prior, ref, 3.0, control_rate=500,
                   noise=SensorNoise(output_std=0.05))                # sim.measured, sim.truth

    plant = Plant.commissioned(robot, robot.prior, control_rate=500)  # drives at rest
    plant.step(plant.actuator_positions() + 0.01)                    # one control period
    positions, output = plant.sense("actuator")                      # what the drives report

Statistical studies measure a robot that follows its reference exactly (no drive loops;
:func:`measure`), many noise draws at the cost of one inverse dynamics::

    sim = measure(robot, robot.prior, ref, 10.0, rate=500, noise=SensorNoise(output_std=0.05),
                  runs=100)
"""

from .budget import MAX_LOAD, BusLoad, BusTiming, Cycle, bus_load, check_budget, max_rate
from .capture import CaptureResult, capture
from .closedloop import ClosedLoop
from .decode import AssemblyStats, CycleAssembler, Sample, decode_log
from .dictionary import cia402_dictionary, load_dictionary
from .drive import DRIVE_PROTOCOLS, Drives, Feedback, open_drives
from .drives import DriveLoops, Gains, tune_loops
from .loopfile import LoopSettings, experiment_loop, load_loop_settings, save_loop_settings
from .measure import measure
from .motion import Schedule, plan
from .pdo import Pdo, PdoMapping, Scaling
from .plant import Plant
from .reference import FourierReference
from .settings import BusSettings, DriveSettings, NodeSettings
from .simulate import SensorNoise, Simulation, simulate, smooth_coulomb
from .virtual import VirtualRobot, VirtualTruth
from .virtual_setup import Faults
from .writer import RecordingWriter

__all__ = [
    "DRIVE_PROTOCOLS",
    "MAX_LOAD",
    "AssemblyStats",
    "BusLoad",
    "BusSettings",
    "BusTiming",
    "CaptureResult",
    "ClosedLoop",
    "Cycle",
    "CycleAssembler",
    "DriveLoops",
    "DriveSettings",
    "Drives",
    "Faults",
    "Feedback",
    "FourierReference",
    "Gains",
    "LoopSettings",
    "NodeSettings",
    "Pdo",
    "PdoMapping",
    "Plant",
    "RecordingWriter",
    "Sample",
    "Scaling",
    "Schedule",
    "SensorNoise",
    "Simulation",
    "VirtualRobot",
    "VirtualTruth",
    "bus_load",
    "capture",
    "check_budget",
    "cia402_dictionary",
    "decode_log",
    "experiment_loop",
    "load_dictionary",
    "load_loop_settings",
    "max_rate",
    "measure",
    "open_drives",
    "plan",
    "save_loop_settings",
    "simulate",
    "smooth_coulomb",
    "tune_loops",
]
