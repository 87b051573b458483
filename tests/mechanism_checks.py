"""Independent checks of mechanism models: energy balance and cut frames.

The power balance ``y·q̇_m = d/dt(T + V + V_springs) + P_friction`` is evaluated with

* ``T`` and ``V`` of the links from Pinocchio's ``computeKineticEnergy`` and
  ``computePotentialEnergy`` on the tree, with the inertias set from ``θ``;
* the kinetic energy of rotors and screws ``½ J ẋ²`` on their own coordinates;
* spring and cable energies from their geometry, written here;
* ``d/dt`` by an eighth-order central difference in time along an analytic trajectory.

Nothing here calls the regressor's assembly; only the model output ``y`` comes from it.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from dynid.models import Regressor
from dynid.models.springs import CableTorque, LinearSpring, TorsionalSpring
from dynid.models.stewart import SharedFriction
from dynid.models.terms import CoordinateTerm

# Eighth-order central difference for the first derivative.
_STENCIL = np.array([1 / 280, -4 / 105, 1 / 5, -4 / 5, 0.0, 4 / 5, -1 / 5, 4 / 105, -1 / 280])


class Trajectory:
    """``q(t) = c + Σ_h A_h sin(ω_h t + φ_h)`` inside the robot's limits, analytic v and a."""

    def __init__(self, robot, seed: int = 0, fraction: float = 0.35, harmonics: int = 3):
        rng = np.random.default_rng(seed)
        lim = robot.limits
        lo = np.where(np.isfinite(lim.lower), lim.lower, -1.0)
        hi = np.where(np.isfinite(lim.upper), lim.upper, 1.0)
        self.center = 0.5 * (lo + hi)
        amp = fraction * 0.5 * (hi - lo) / harmonics
        self.amp = amp * rng.uniform(0.5, 1.0, (harmonics, robot.n))
        self.omega = rng.uniform(1.0, 4.0, (harmonics, 1)) * np.ones((1, robot.n))
        self.phase = rng.uniform(0, 2 * np.pi, (harmonics, robot.n))

    def __call__(self, t: np.ndarray):
        t = np.asarray(t, dtype=float)[:, None, None]
        arg = self.omega * t + self.phase
        q = self.center + np.sum(self.amp * np.sin(arg), axis=1)
        v = np.sum(self.amp * self.omega * np.cos(arg), axis=1)
        a = -np.sum(self.amp * self.omega ** 2 * np.sin(arg), axis=1)
        return q, v, a


def model_with(robot, theta: np.ndarray) -> pin.Model:
    """A copy of the tree's model with the link inertias of ``theta``."""
    model = robot.tree.model.copy()
    for j, block in enumerate(robot.link_values(theta)):  # massless links: zeros
        if block[0] == 0 and not np.any(block[1:4]):  # a massless link: rotational part only
            I = block[[4, 5, 7, 5, 6, 8, 7, 8, 9]].reshape(3, 3)
            model.inertias[j + 1] = pin.Inertia(0.0, np.zeros(3), I)
        else:
            model.inertias[j + 1] = pin.Inertia.FromDynamicParameters(block)
    return model


def _spaces(robot, q, v):
    q_t, v_t, _, _ = robot.closure.tree_state(q, v, np.zeros_like(q))
    q_m, v_m, _, _ = robot.transmission.actuator_state(q, v, np.zeros_like(q))
    return {"tree": (q_t, v_t), "basis": (q, v), "actuator": (q_m, v_m)}


def _spring_energy(term, x: np.ndarray, k: float) -> np.ndarray:
    if isinstance(term, TorsionalSpring):
        return 0.5 * k * (x - term.rest) ** 2
    if isinstance(term, LinearSpring):
        # The two attachment points in the joint's plane: one fixed, one turning with x.
        p1 = np.stack([np.full_like(x, term.a), np.zeros_like(x)], axis=1)
        ang = x + term.gamma
        p2 = term.b * np.stack([np.cos(ang), np.sin(ang)], axis=1)
        length = np.linalg.norm(p2 - p1, axis=1)
        return 0.5 * k * (length - term.rest_length) ** 2
    raise TypeError(term)


def energy_and_friction(robot, theta, q, v):
    """Stored energy E (N,) and dissipated power P (N,) at states (N, n)."""
    model = model_with(robot, theta)
    data = model.createData()
    spaces = _spaces(robot, q, v)
    q_t, v_t = spaces["tree"]
    cfg = robot.tree.configuration(q_t)
    E = np.array([pin.computeKineticEnergy(model, data, c, w)
                  + pin.computePotentialEnergy(model, data, c) for c, w in zip(cfg, v_t,
                                                                                 strict=True)])
    P = np.zeros(q.shape[0])
    value = dict(zip(robot.parameters.names, theta, strict=True))
    for term in robot.terms:
        x_all, xd_all = spaces[term.space]
        x, xd = x_all[:, term.rows[0]], xd_all[:, term.rows[0]]
        if isinstance(term, CoordinateTerm):
            for p, source, s in zip(term.parameters, term._sources, term._scales, strict=True):
                k = value[p.name] * s
                if source == "a":
                    E += 0.5 * k * xd ** 2
                elif source == "v":
                    P += k * xd ** 2
                elif source == "sign":
                    sgn = np.tanh(xd / term.smoothing) if term.smoothing else np.sign(xd)
                    P += k * sgn * xd
                else:  # a constant force: its power
                    P += k * xd
        elif isinstance(term, SharedFriction):  # one coefficient on several coordinates
            rates = xd_all[:, list(term.rows)]
            k = value[term.parameters[0].name]
            sgn = np.tanh(rates / term.smoothing) if term.smoothing else np.sign(rates)
            P += k * np.sum(rates ** 2 if term.kind == "viscous" else sgn * rates, axis=1)
        elif isinstance(term, CableTorque):
            for deg, p in enumerate(term.parameters):
                E += value[p.name] * x ** (deg + 1) / (deg + 1)
        else:
            E += _spring_energy(term, x, value[term.parameters[0].name])
    return E, P


def power_balance_error(robot, theta, *, seed: int = 0, n: int = 12, h: float = 1e-3,
                        fraction: float = 0.35) -> float:
    """Largest ``|y·q̇_m − dE/dt − P|`` relative to the largest ``|y·q̇_m|`` along a random
    smooth trajectory, with ``y`` the motor-torque output of the regressor."""
    robot = robot.with_output("motor_torque")
    traj = Trajectory(robot, seed, fraction)
    t = np.linspace(0.1, 3.0, n)
    q, v, a = traj(t)
    y = Regressor(robot)(q, v, a) @ theta
    v_m = robot.transmission.actuator_state(q, v, a)[1]
    power_in = np.sum(y * v_m, axis=1)
    offsets = np.arange(-4, 5) * h
    dE = np.zeros(n)
    P = None
    for w, dt in zip(_STENCIL, offsets, strict=True):
        E, P_k = energy_and_friction(robot, theta, *traj(t + dt)[:2])
        if dt == 0:
            P = P_k
        dE += w * E / h
    return float(np.abs(power_in - dE - P).max() / np.abs(power_in).max())


def cut_distance(robot, q_t: np.ndarray) -> np.ndarray:
    """For each sample, the largest gap between the two frames of any cut, from Pinocchio's
    forward kinematics: the distance between their origins (m), plus, for a revolute cut, the
    distance between their unit z axes and, for a weld, the largest difference between their
    rotation matrices."""
    model, data = robot.tree.model, robot.tree.model.createData()
    out = np.zeros(q_t.shape[0])
    for k, c in enumerate(robot.tree.configuration(q_t)):
        pin.framesForwardKinematics(model, data, c)
        for cut in robot.closure.cuts:
            A = data.oMf[model.getFrameId(cut.frames[0])]
            B = data.oMf[model.getFrameId(cut.frames[1])]
            d = np.linalg.norm(A.translation - B.translation)
            if cut.kind == "revolute":
                d += np.linalg.norm(A.rotation[:, 2] - B.rotation[:, 2])
            elif cut.kind == "weld":
                d += np.abs(A.rotation - B.rotation).max()
            out[k] = max(out[k], d)
    return out


def cut_motion(robot, q_t: np.ndarray, v_t: np.ndarray, a_t: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """For each sample, the largest relative velocity and the largest relative acceleration of
    the two frames of any cut, in what the cut's kind holds together, from Pinocchio's forward
    kinematics: the origins (m/s, m/s²); for a revolute cut also the rates of the z axes
    (``ż = ω × z``, ``z̈ = α × z + ω × ż``), for a weld the angular velocity and acceleration.
    A closure that keeps the cuts closed along a motion makes both vanish."""
    model, data = robot.tree.model, robot.tree.model.createData()
    world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    vel, acc = np.zeros(q_t.shape[0]), np.zeros(q_t.shape[0])
    for k, (c, w, dw) in enumerate(zip(robot.tree.configuration(q_t), v_t, a_t, strict=True)):
        pin.forwardKinematics(model, data, c, w, dw)
        pin.updateFramePlacements(model, data)
        for cut in robot.closure.cuts:
            rates = []
            for name in cut.frames:
                fid = model.getFrameId(name)
                z = data.oMf[fid].rotation[:, 2]
                v = pin.getFrameVelocity(model, data, fid, world)
                a = pin.getFrameClassicalAcceleration(model, data, fid, world)
                zd = np.cross(v.angular, z)
                rates.append({"point": (v.linear, a.linear),
                              "revolute": (np.r_[v.linear, zd],
                                           np.r_[a.linear, np.cross(a.angular, z)
                                                 + np.cross(v.angular, zd)]),
                              "weld": (v.vector, a.vector)}[cut.kind])
            (va, aa), (vb, ab) = rates
            vel[k] = max(vel[k], np.abs(va - vb).max())
            acc[k] = max(acc[k], np.abs(aa - ab).max())
    return vel, acc
