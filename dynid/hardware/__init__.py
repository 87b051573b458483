"""Drive interfaces over CAN, simulated drives, capture.

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
"""

from .drives import DriveLoops, Gains, tune_loops
from .plant import Plant
from .reference import FourierReference
from .simulate import SensorNoise, Simulation, simulate, smooth_coulomb

__all__ = [
    "DriveLoops",
    "FourierReference",
    "Gains",
    "Plant",
    "SensorNoise",
    "Simulation",
    "simulate",
    "smooth_coulomb",
    "tune_loops",
]
