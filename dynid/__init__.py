"""dynid: identify the dynamic model of real robots.

The public API::

    import dynid
    robot = dynid.load_robot("panda")              # embedded name or robot file
    reg = dynid.Regressor(robot)
    Y = reg(q, v, a)                               # (N, n, p), columns named by robot.parameters
    base = dynid.base_parameters(robot)            # identifiable combinations
    design = dynid.design_excitation(robot)        # optimal Fourier excitation
    data = dynid.IdentificationData(robot, [dynid.read_npz("run.npz")])
    est = dynid.PhysicallyConsistent().fit(data)   # est.params_, est.cov_, est.result_
    dynid.write_report(robot, est.result_, [rec], "report.html")   # one HTML file
    dynid.write_urdf(robot, est.result_, "robot.urdf")   # and write_mjcf for MuJoCo
"""

from .errors import (
    BusBudgetError,
    BusError,
    CaptureError,
    CaptureTimeoutError,
    DataError,
    DriveConfigError,
    DriveFaultError,
    DynidError,
    DynidWarning,
    FollowingError,
    HardwareError,
    ModelError,
    SolverError,
    TrajectoryError,
)
from .export import Export, urdf_text, write_mjcf, write_urdf
from .identify import (
    OLS,
    WLS,
    ColumnMap,
    Flat,
    GaussMarkov,
    IdentificationData,
    PhysicallyConsistent,
    Processing,
    Recording,
    Trim,
    essential_parameters,
    identify_drive_gains,
    identify_friction,
    identify_payload,
    load_drive_gains,
    load_payload,
    load_result,
    read_csv,
    read_npz,
    select_friction,
    validate,
)
from .models import (
    BaseParameters,
    Parameter,
    ParameterSet,
    Regressor,
    Robot,
    base_parameters,
    embedded_robots,
    load_robot,
    random_robot,
    with_friction,
)
from .report import write_report
from .trajectories import DesignSettings, FourierTrajectory, design_excitation, load_trajectory

__version__ = "0.1.0"

__all__ = [
    "OLS",
    "WLS",
    "BaseParameters",
    "BusBudgetError",
    "BusError",
    "CaptureError",
    "CaptureTimeoutError",
    "ColumnMap",
    "DataError",
    "DesignSettings",
    "DriveConfigError",
    "DriveFaultError",
    "DynidError",
    "DynidWarning",
    "Export",
    "Flat",
    "FollowingError",
    "FourierTrajectory",
    "GaussMarkov",
    "HardwareError",
    "IdentificationData",
    "ModelError",
    "Parameter",
    "ParameterSet",
    "PhysicallyConsistent",
    "Processing",
    "Recording",
    "Regressor",
    "Robot",
    "SolverError",
    "TrajectoryError",
    "Trim",
    "__version__",
    "base_parameters",
    "design_excitation",
    "embedded_robots",
    "essential_parameters",
    "identify_drive_gains",
    "identify_friction",
    "identify_payload",
    "load_drive_gains",
    "load_payload",
    "load_result",
    "load_robot",
    "load_trajectory",
    "random_robot",
    "read_csv",
    "read_npz",
    "select_friction",
    "urdf_text",
    "validate",
    "with_friction",
    "write_mjcf",
    "write_report",
    "write_urdf",
]
