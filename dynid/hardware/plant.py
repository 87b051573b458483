"""The simulated robot and its drives, stepped one control period at a time.

:class:`Plant` holds ``runs`` independent copies of a robot with known parameters ``θ`` and of
its drives. Each call of :meth:`Plant.step` is one control period ``dt`` of every drive:

1. *Encoder.* At the start of the period each drive holds the reading of its encoder latched
   at that instant, ``q̂_m`` (the true actuator position plus optional white noise, quantized
   to the encoder's step). Its velocity is the difference of successive readings over ``dt``,
   low-passed by a first-order filter of time constant ``τ_f`` (none for a fine encoder):
   ``v̂ ← v̂ + s ((q̂_m − q̂_m⁻) / dt − v̂)`` with ``s = 1 − exp(−dt / τ_f)``.
2. *Position loop*, proportional: the velocity demand is ``v* + k_p (q* − q̂_m)`` with ``q*``
   the actuator target and ``v*`` the velocity feed-forward (given, or the difference of
   successive targets over ``dt``, as a drive in cyclic synchronous position mode forms it),
   passed through the same filter as the measured velocity so that a motion tracked exactly
   leaves no velocity error behind the filter's lag.
3. *Velocity loop*, PI: with ``e`` the velocity error, the command is
   ``c = k_v (e + k_i (∫e + e dt)) + u_ff`` with ``u_ff`` the output feed-forward, limited to
   the drive's range; the integral stops while the command is limited (anti-windup). The
   first period starts the integral where it holds the robot: the output at rest there
   minus that period's feed-forward.
4. *Current loop.* A PI current controller on the motor winding (resistance ``R``, inductance
   ``L``), with the back-EMF fed forward, sees the winding alone, ``1 / (R + L s)``; with the
   controller's zero placed on the winding's pole (integral time ``L / R``) and its gain
   ``2π f_c L``, the open loop is ``2π f_c / s`` and the closed loop the first-order lag
   ``1 / (1 + s / (2π f_c))``. That lag, with ``f_c`` the current bandwidth of
   :class:`~dynid.hardware.drives.DriveLoops`, is what the plant applies; the torque is the
   torque constant times the current, so a torque-controlled drive is the same lag. The
   command reaches the lag as a ramp over the period, from the previous command to this
   one, and the lag is solved in closed form: the applied output is continuous.
5. *Mechanics.* The forward dynamics ``a = M(q)⁻¹ (u − h(q, v))`` of
   :class:`~dynid.models.dynamics.Dynamics` (the output-space model: joint torque, motor
   torque or current) advance the state by classical Runge–Kutta steps (``substeps`` a
   period); then the drives latch their encoders for the next period.

:meth:`Plant.sense` is what a drive reports at the current instant: the position on either
side and the output as :class:`~dynid.hardware.sensors.SensorNoise` states them (noise drawn
anew at each call, ripple on the measured output only). Gains come from
:func:`~dynid.hardware.drives.tune_loops`; :meth:`Plant.commissioned` tunes them without any
trajectory, as a drive is commissioned.

Examples
--------
>>> plant = Plant.commissioned(robot, robot.prior, control_rate=1000.0)
>>> hold = plant.actuator_positions()
>>> for k in range(1000):                      # one second of a 0.01 rad move on every axis
...     plant.step(hold + 0.01 * min(k / 200, 1.0))
>>> positions, output = plant.sense("actuator")
"""

from __future__ import annotations

import numpy as np

from .. import _validate
from ..errors import DataError
from ..models import Robot
from ..models.dynamics import Dynamics
from .drives import DriveLoops, Gains, command_limits, encoder_steps, tune_loops
from .sensors import SensorNoise, Sensors, quantize

__all__ = ["Plant"]


class Plant:
    """``runs`` independent copies of a robot and its drives, stepped one control period at
    a time (the model is stated in :mod:`dynid.hardware.plant`).

    Parameters
    ----------
    robot, theta
        The robot and its true standard parameters (p,).
    control_rate
        Rate of the drives' loops, Hz.
    gains, loops, noise
        The drives' gains (:func:`~dynid.hardware.drives.tune_loops`), loops and sensors.
    q0, v0
        Start state in basis coordinates, (n,) or (runs, n); ``v0`` defaults to rest.
    runs
        Independent copies simulated together (one regressor call per evaluation).
    seed
        Seed of the sensors' noise.

    Attributes
    ----------
    time
        Seconds simulated so far.
    q, v, a
        True basis positions, velocities and accelerations (runs, n).
    current
        Output applied by the drives (runs, n): current (A) or torque (N·m, N).
    limits
        Command limit of each drive (n,), in the output's units.
    robot, gains, loops, runs, control_rate, dt
        As given (``dt = 1 / control_rate``, s).

    Examples
    --------
    >>> dyn = Dynamics(robot, theta)
    >>> gains = tune_loops(dyn, ref(np.arange(0, 10, 1e-3)), DriveLoops(), 1000.0, steps)
    >>> plant = Plant(robot, theta, control_rate=1000.0, gains=gains, loops=DriveLoops(),
    ...               noise=SensorNoise(output_std=0.01), q0=ref(0.0)[0][0], runs=4)
    >>> plant.step(targets)                   # actuator targets (4, n) or (n,)
    """

    def __init__(self, robot: Robot, theta: np.ndarray, *, control_rate: float, gains: Gains,
                 loops: DriveLoops, noise: SensorNoise, q0: np.ndarray,
                 v0: np.ndarray | None = None, runs: int = 1, seed: int = 0):
        if not (_validate.is_number(control_rate) and control_rate > 0):
            raise DataError(f"control_rate: expected a rate > 0 Hz, found {control_rate!r}; "
                            "e.g. Plant(..., control_rate=1000.0)")
        if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 1:
            raise DataError(f"runs: expected a whole number ≥ 1, found {runs!r}")
        n = robot.n
        self.robot, self.loops, self.gains, self.runs = robot, loops, gains, int(runs)
        self.control_rate, self.dt = float(control_rate), 1.0 / control_rate
        for name in ("velocity", "integral", "position", "velocity_filter"):
            if np.shape(getattr(gains, name)) != (n,):
                raise DataError(f"gains.{name}: expected one value per actuator ({n}), found "
                                f"shape {np.shape(getattr(gains, name))}; tune them for this "
                                "robot with tune_loops")
        self._sensors = Sensors(robot, noise)
        self._dyn = Dynamics(robot, theta)
        self._rng = np.random.default_rng(seed)
        self._encoder = encoder_steps(robot, loops)
        self.limits = command_limits(robot, loops)
        q = self._state(q0, "q0")
        _check_limits(robot, q)
        v = np.zeros_like(q) if v0 is None else self._state(v0, "v0")
        self._q, self._v = q, v
        self._substeps = max(1, int(loops.substeps))
        self._tau = 1.0 / (2 * np.pi * loops.current_bandwidth)
        self._kp, self._kv, self._ki = gains.position, gains.velocity, gains.integral
        filt = gains.velocity_filter
        self._smoothing = np.where(filt > 0, -np.expm1(-self.dt / np.where(filt > 0, filt, 1.0)),
                                   1.0)
        # At rest where it starts, each drive applies the output that holds the robot.
        self._rest = self._dyn.terms(q, np.zeros_like(q))[1]
        self._current = self._rest
        self._command = self._rest
        self._integral: np.ndarray | None = None
        self._a = _accel(self._dyn, q, v, self._current)
        q_m, v_m = robot.transmission.actuator_state(q, v, np.zeros_like(q))[:2]
        self._previous = quantize(q_m - v_m * self.dt, self._encoder)
        self._velocity = v_m              # the filtered encoder velocity
        self._demand = v_m                # the filtered velocity feed-forward
        self._target: np.ndarray | None = None
        self._steps = 0
        self._latch()

    @property
    def time(self) -> float:
        return self._steps * self.dt

    q = property(lambda self: _frozen(self._q), doc="True basis positions (runs, n).")
    v = property(lambda self: _frozen(self._v), doc="True basis velocities (runs, n).")
    a = property(lambda self: _frozen(self._a), doc="True basis accelerations (runs, n).")
    current = property(lambda self: _frozen(self._current),
                       doc="Output applied by the drives (runs, n).")

    def actuator_positions(self) -> np.ndarray:
        """True actuator positions ``q_m`` (runs, n), rad or m."""
        return _frozen(self._q_m)

    def sense(self, space: str = "actuator") -> tuple[np.ndarray, np.ndarray]:
        """What the drives report now: measured positions (runs, n) on the ``"actuator"`` or
        ``"basis"`` side, and the measured output (runs, n), each with fresh noise."""
        if space not in ("basis", "actuator"):
            raise DataError(f"space: expected 'basis' or 'actuator', found {space!r}")
        rng = self._rng
        positions = self._sensors.positions(self._q_m if space == "actuator" else self._q,
                                            space, rng)
        return positions, self._sensors.output(self._current, self._q_m, rng)

    def step(self, target: np.ndarray, velocity: np.ndarray | None = None,
             feedforward: np.ndarray | None = None) -> None:
        """One control period: the drives track actuator ``target`` (runs, n) or (n,) (rad
        or m) with velocity feed-forward ``velocity`` (default: the difference of successive
        targets over the period) and output feed-forward ``feedforward`` (default: none),
        and the robot moves on by ``dt``."""
        target = self._input(target, "target")
        if velocity is not None:
            velocity = self._input(velocity, "velocity")
        ff = 0.0 if feedforward is None else self._input(feedforward, "feedforward")
        if velocity is None:
            velocity = (self._demand if self._target is None
                        else (target - self._target) / self.dt)
        self._target = target
        s, kv, ki, dt = self._smoothing, self._kv, self._ki, self.dt
        self._demand = s * velocity + (1.0 - s) * self._demand
        if self._integral is None:
            self._integral = (self._rest - ff) / (kv * ki)
        error = self._demand + self._kp * (target - self._measured) - self._velocity
        command = kv * (error + ki * (self._integral + error * dt)) + ff
        u = np.minimum(np.maximum(command, -self.limits), self.limits)
        self._integral = np.where(u == command, self._integral + error * dt, self._integral)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                self._advance(u)
        except DataError as error:
            raise DataError(
                f"the simulated robot diverged between t = {self.time:.6g} s and "
                f"{self.time + dt:.6g} s ({error}): its loops are unstable or the period is "
                "too long for its dynamics; e.g. DriveLoops(a=3.0) (a ≥ 1.5), a higher "
                "control_rate or DriveLoops(substeps=4)") from None
        self._command = u
        self._steps += 1
        self._latch()

    def _advance(self, u: np.ndarray) -> None:
        """Integrate the mechanics over one period while the current loop follows the
        command ramping from the previous one to ``u``."""
        dt, tau, dyn = self.dt, self._tau, self._dyn
        start = self._command
        slope = (u - start) / dt
        offset = self._current - start + slope * tau

        def current_at(s):
            return start + slope * (s - tau) + offset * np.exp(-s / tau)

        q, v, a, current = self._q, self._v, self._a, self._current
        h = dt / self._substeps
        for i in range(self._substeps):
            s0 = i * h
            c_mid, c_end = current_at(s0 + h / 2), current_at(s0 + h)
            dq1, dv1 = v, a
            dq2, dv2 = v + dv1 * h / 2, _accel(dyn, q + dq1 * h / 2, v + dv1 * h / 2, c_mid)
            dq3, dv3 = v + dv2 * h / 2, _accel(dyn, q + dq2 * h / 2, v + dv2 * h / 2, c_mid)
            dq4, dv4 = v + dv3 * h, _accel(dyn, q + dq3 * h, v + dv3 * h, c_end)
            q = q + h / 6 * (dq1 + 2 * dq2 + 2 * dq3 + dq4)
            v = v + h / 6 * (dv1 + 2 * dv2 + 2 * dv3 + dv4)
            current = c_end
            a = _accel(dyn, q, v, current)
        self._q, self._v, self._a, self._current = q, v, a, current

    def _latch(self) -> None:
        """The drives read their encoders: the position and velocity the next period's loops
        use."""
        q = self._q
        self._q_m = self.robot.transmission.actuator_state(q, self._v, np.zeros_like(q))[0]
        measured = quantize(self._q_m + self._sensors.position_std * self._rng.standard_normal(
            q.shape), self._encoder)
        self._velocity = self._velocity + self._smoothing * (
            (measured - self._previous) / self.dt - self._velocity)
        self._previous = self._measured = measured

    def _state(self, x, name: str) -> np.ndarray:
        """A start state (n,) or (runs, n) as (runs, n)."""
        n, runs = self.robot.n, self.runs
        arr = np.asarray(x, dtype=float)
        if arr.shape not in ((n,), (runs, n)):
            raise DataError(f"{name}: expected basis coordinates of shape ({n},) or ({runs}, "
                            f"{n}), found shape {arr.shape}")
        arr = _validate.batch(arr.reshape(-1, n), name, n)
        return np.repeat(arr, runs, axis=0) if len(arr) == 1 else arr

    def _input(self, x, name: str) -> np.ndarray:
        """A per-period input, (n,) or (runs, n), checked; broadcast by the arithmetic."""
        arr = np.asarray(x, dtype=float)
        n, runs = self.robot.n, self.runs
        if arr.shape not in ((n,), (runs, n)):
            raise DataError(f"{name}: expected one value per actuator, shape ({n},) or "
                            f"({runs}, {n}), found shape {arr.shape}; e.g. plant.step("
                            "plant.actuator_positions())")
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise DataError(f"{name}: non-finite value {arr[tuple(bad)]} at index "
                            f"{tuple(int(i) for i in bad)} at t = {self.time:.6g} s; every "
                            "drive needs a finite value each period")
        return arr

    @classmethod
    def commissioned(cls, robot: Robot, theta: np.ndarray, *, control_rate: float,
                     loops: DriveLoops | None = None, noise: SensorNoise | None = None,
                     q0: np.ndarray | None = None, speed: np.ndarray | float | None = None,
                     runs: int = 1, seed: int = 0, states: int = 64) -> Plant:
        """A plant whose drives were tuned at commissioning, without a trajectory.

        The gains follow the rule of :class:`~dynid.hardware.drives.DriveLoops` over the
        start state and ``states − 1`` configurations drawn uniformly within the joint limits
        (±π where a joint has none; seeded by ``seed``), with the peak speed of each actuator
        ``speed`` (rad/s or m/s, scalar or (n,)), else its velocity limit, else the largest
        speed the joint velocity limits give it through the transmission at these states.
        ``q0`` defaults to the middle of the joint ranges (0 where unbounded); the robot
        starts at rest there.

        Examples
        --------
        >>> plant = Plant.commissioned(robot, theta, control_rate=1000.0, speed=300.0)
        >>> plant.gains.velocity                  # velocity-loop gain of each drive
        """
        loops = loops or DriveLoops()
        if not (_validate.is_number(control_rate) and control_rate > 0):
            raise DataError(f"control_rate: expected a rate > 0 Hz, found {control_rate!r}; "
                            "e.g. Plant.commissioned(robot, theta, control_rate=1000.0)")
        lim, n = robot.limits, robot.n
        lower = np.where(np.isfinite(lim.lower), lim.lower, -np.pi)
        upper = np.where(np.isfinite(lim.upper), lim.upper, np.pi)
        if q0 is None:
            q0 = np.where(np.isfinite(lim.lower) & np.isfinite(lim.upper),
                          (lower + upper) / 2, 0.0)
        start = _validate.batch(q0, "q0", n)
        _check_limits(robot, start)
        drawn = np.random.default_rng(seed).uniform(lower, upper, (max(states - 1, 0), n))
        configurations = np.vstack([start, drawn])
        if speed is None:
            speed = robot.actuator_limits.velocity
            if not np.all(np.isfinite(speed)):
                K = np.abs(robot.transmission.jacobian(configurations))
                with np.errstate(invalid="ignore"):  # 0 · inf where a joint moves no actuator
                    through = np.where(K > 0, K * lim.velocity, 0.0).sum(axis=2).max(axis=0)
                speed = np.where(np.isfinite(speed), speed, through)
            if not np.all(np.isfinite(speed)):
                free = [robot.actuator_names[j] for j in np.flatnonzero(~np.isfinite(speed))]
                raise DataError(f"speed: the robot states no velocity limit for actuators "
                                f"{free}; give their peak speed, e.g. Plant.commissioned("
                                "robot, theta, control_rate=1000.0, speed=300.0)")
        gains = tune_loops(Dynamics(robot, theta), configurations, loops, control_rate,
                           encoder_steps(robot, loops), speed=speed)
        return cls(robot, theta, control_rate=control_rate, gains=gains, loops=loops,
                   noise=noise or SensorNoise(), q0=q0, runs=runs, seed=seed)


def _accel(dyn: Dynamics, q: np.ndarray, v: np.ndarray, u: np.ndarray) -> np.ndarray:
    M, h = dyn.terms(q, v)
    return np.linalg.solve(M, (u - h)[..., None])[..., 0]


def _check_limits(robot: Robot, q: np.ndarray) -> None:
    lim = robot.limits
    outside = (q < lim.lower) | (q > lim.upper)
    if np.any(outside):
        r, j = np.argwhere(outside)[0]
        raise DataError(f"q0: joint {robot.joint_names[j]} at {q[r, j]:.6g} is outside its "
                        f"limits [{lim.lower[j]:.6g}, {lim.upper[j]:.6g}]; start the robot "
                        "within them, e.g. q0 at the middle of the joint ranges")


def _frozen(x: np.ndarray) -> np.ndarray:
    view = x.view()
    view.flags.writeable = False
    return view
