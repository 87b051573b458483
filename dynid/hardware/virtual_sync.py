"""The SYNC cycle of the simulated robot (:class:`~dynid.hardware.virtual.VirtualRobot`): what
its drives and its plant do when a SYNC comes.

At each SYNC the drives latch the receive PDOs that came since the last one, sample the plant
(positions in increments, output in thousandths of the rated value, velocity as the encoder
difference over the period, time stamp), check their following error and send their transmit
PDOs (some lost, or all of them late, as :class:`~dynid.hardware.virtual_setup.Faults` says);
then the plant moves one period towards the targets if every drive controls its axis, else
the arm is held, as by its brakes. Quick-stopping drives go to SWITCH ON DISABLED once their
axis stands still. The steps, and the rules for a held arm and for quick stops, are those of
:mod:`dynid.hardware.virtual`'s docstring.

Everything depends on the SYNC count, never on wall-clock time. Positions cross the bus in
increments (:class:`~dynid.hardware.pdo.Scaling`: ``counts = position / resolution + zero``),
the output in thousandths of the drive's rated value.
"""

from __future__ import annotations

import time

import can
import numpy as np

from ..errors import DriveConfigError
from .plant import Plant
from .sensors import SensorNoise

__all__ = ["SyncCycle"]

_CONTROLLING = ("OPERATION ENABLED", "QUICK STOP ACTIVE")
_QUICK_STOP_TIMEOUT = 2.0
_STANDSTILL = 0.02


class SyncCycle:
    """The answer to each SYNC, for :class:`~dynid.hardware.virtual.VirtualRobot`, which
    inherits it and sets the state it works on: ``robot``, ``theta``, ``rate``, ``seed``,
    ``noise``, ``fd``, ``faults``, ``plant``, ``drives``, ``network`` and the frame sender
    ``_sender``, the drives' scalings as arrays (``_res``, ``_zero``, ``_unit``), their clock
    offsets ``_offsets`` and the generator of lost frames ``_drops``; the truth rows ``_rows``
    under ``_lock``; the SYNC count ``_count``, ``handling_time`` and ``errors``; and the arm's
    state: ``_held``, ``_releases``, ``_demand``, ``_stopping``, ``_braking``, ``_brake`` and
    ``_still``."""

    def _on_sync(self, cob_id: int, data: bytearray, timestamp: float) -> None:
        start = time.perf_counter()
        try:
            self._sync()
        except Exception as exc:  # the notifier thread would only log it
            self.errors.append(exc)
        self.handling_time += time.perf_counter() - start

    def _sync(self) -> None:
        drives, faults, k = self.drives, self.faults, self._count
        if not any(d.operational for d in drives):
            return
        if k == faults.cut_at:
            drives[faults.cut_drive].silence()
        if k == faults.fault_at:
            drives[faults.fault_drive].fault(faults.fault_code)
        for drive in drives:
            if drive.operational:
                drive.latch()
            if self._held and drive.state == "QUICK STOP ACTIVE":
                drive.state = "SWITCH ON DISABLED"     # its axis stands still, held
        self._sample(k)
        self._braking &= np.array([d.state == "SWITCH ON DISABLED" for d in drives])
        moving = all((d.state in _CONTROLLING or self._braking[j])
                     and d.node.nmt.state == "OPERATIONAL" for j, d in enumerate(drives))
        moving = moving and not np.all(self._braking)
        if not moving:
            self._braking[:] = False
        plant = self.plant
        with self._lock:
            q, v, a = plant.q[0].copy(), plant.v[0], plant.a[0]
            applied = plant.current[0]
            if self._held:
                v = a = applied = np.zeros_like(q)
            self._rows.append((k / self.rate, q, v.copy(), a.copy(),
                               plant.actuator_positions()[0].copy(), applied.copy(), moving))
        if moving:
            self._advance()
        else:
            self._demand = [None] * len(drives)
        self._held = not moving
        self._count += 1

    def _sample(self, k: int) -> None:
        positions, output = self.plant.sense("actuator")
        counts = self._counts(positions[0])
        previous = np.array([d.position for d in self.drives])
        velocity = np.clip((counts - previous) * self.rate, -(2**31), 2**31 - 1)
        raw = (np.zeros(len(counts), dtype=np.int64) if self._held else
               np.clip(np.rint(output[0] / self._unit), -(2**15), 2**15 - 1).astype(np.int64))
        stamps = (round(k * 1e6 / self.rate) + self._offsets) % 2**32
        frames = []
        for j, drive in enumerate(self.drives):
            drive.position, drive.velocity = int(counts[j]), int(velocity[j])
            drive.output, drive.stamp = int(raw[j]), int(stamps[j])
            demand = self._demand[j]
            if (drive.state == "OPERATION ENABLED" and demand is not None
                    and abs(drive.position - demand) > drive.window):
                drive.fault(0x8611)
            if drive.operational:
                frames.extend(drive.frames(k))
        if self.faults.drop > 0:
            keep = self._drops.random(len(frames)) >= self.faults.drop
            frames = [f for f, kept in zip(frames, keep, strict=True) if kept]
        messages = [can.Message(arbitration_id=cob_id, data=payload, is_extended_id=False,
                                is_fd=self.fd, bitrate_switch=self.fd)
                    for cob_id, payload in frames]
        if self._sender is not None:
            self._sender.put(time.monotonic() + self.faults.delay, messages)
        else:
            bus = self.network.bus
            for message in messages:
                bus.send(message)

    def _counts(self, positions: np.ndarray) -> np.ndarray:
        """Actuator positions (n,) in increments: :meth:`Scaling.to_counts` of every drive at
        once."""
        counts = np.rint(positions / self._res + self._zero)
        if not np.all(np.abs(counts) < 2**31):
            j = int(np.argmax(np.abs(counts)))
            raise DriveConfigError(f"position of node {self.drives[j].id}: {positions[j]:.6g} "
                                   f"is beyond the drive's 32-bit position range at "
                                   f"{self._res[j]:.6g} per increment; give a coarser scaling")
        return counts.astype(np.int64)

    def _advance(self) -> None:
        """Move the plant one period towards the drives' targets."""
        drives, n = self.drives, self.robot.n
        if self._held and np.any(self.plant.v != 0):
            self._restart()
        targets = np.where(self._braking, self._brake, [d.target for d in drives])
        velocity = np.zeros(n)
        for j, d in enumerate(drives):
            if d.state == "QUICK STOP ACTIVE" or self._braking[j]:
                continue
            if "velocity_offset" in d.receives:
                velocity[j] = d.velocity_offset * self._res[j]
            elif self._demand[j] is not None:
                velocity[j] = (d.target - self._demand[j]) * self._res[j] * self.rate
        target = (targets - self._zero) * self._res
        feedforward = np.array([d.torque_offset for d in drives]) * self._unit
        self.plant.step(target, velocity, feedforward)
        self._demand = [int(t) for t in targets]
        stopping = np.array([d.state == "QUICK STOP ACTIVE" for d in drives])
        if np.any(stopping):
            self._quick_stops(stopping)
        self._stopping[~stopping] = self._still[~stopping] = 0.0

    def _quick_stops(self, stopping: np.ndarray) -> None:
        """Drives quick stopping whose axis stands still go to SWITCH ON DISABLED."""
        plant = self.plant
        speed = np.abs(self.robot.transmission.actuator_state(
            plant.q, plant.v, np.zeros_like(plant.q))[1][0])
        dt = 1.0 / self.rate
        self._stopping[stopping] += dt
        still = stopping & (speed < self._res * self.rate)
        self._still = np.where(still, self._still + dt, 0.0)
        done = stopping & ((self._still >= _STANDSTILL - dt / 2)
                           | (self._stopping >= _QUICK_STOP_TIMEOUT - dt / 2))
        for j in np.flatnonzero(done):
            self.drives[j].state = "SWITCH ON DISABLED"
            self._brake[j] = self.drives[j].target
        self._braking |= done

    def _restart(self) -> None:
        """The arm was held: the plant restarts at rest where it stands."""
        self._releases += 1
        old = self.plant
        seed = int(np.random.SeedSequence([self.seed, 3, self._releases]).generate_state(1)[0])
        self.plant = Plant(self.robot, self.theta, control_rate=self.rate, gains=old.gains,
                           loops=old.loops, noise=self.noise or SensorNoise(), q0=old.q[0],
                           seed=seed)
