"""Captures on the simulated robot over python-can's virtual bus: the recording matches what
the robot did, feeds identification as it is, and equals what a bus log decodes to; faults,
a killed capture and refusals before any frame each behave as promised."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import can
import numpy as np
import pytest

import dynid
from dynid.cli import main
from dynid.errors import (
    BusBudgetError,
    CaptureTimeoutError,
    DriveFaultError,
    FollowingError,
    TrajectoryError,
)
from dynid.hardware import (
    BusSettings,
    DriveSettings,
    FourierReference,
    capture,
    decode_log,
    smooth_coulomb,
)
from dynid.hardware.virtual import Faults, VirtualRobot
from dynid.models import load_robot
from dynid.trajectories import save_trajectory

_channels = itertools.count()


def _setup(name, *, rate=250.0, fd=False, periods=1, frequency=0.5, lockstep=True,
           **settings):
    """A robot, a reference, a bus and drive settings; ``lockstep``: the capture waits for
    every answer of the simulated robot (it shares the process and a busy machine delays
    it), else it drops the late ones as on real drives."""
    robot = smooth_coulomb(load_robot(name), joint=0.05)
    ref = FourierReference.random(robot, harmonics=3, frequency=frequency, ramp=0.5,
                                  periods=periods, seed=4)
    bus = BusSettings(channel=f"capture-test-{os.getpid()}-{next(_channels)}", fd=fd,
                      data_bitrate=5e6 if fd else None)
    settings = DriveSettings.defaults(robot, rate=rate, fd=fd, **settings)
    return robot, ref, bus, VirtualRobot.lockstep(settings) if lockstep else settings


def _aligned(recorded, truth) -> slice:
    """The rows of ``truth`` the ``recorded`` rows are: the offset that fits best."""
    N = len(recorded)
    errors = [np.abs(recorded - truth[o:o + N]).max() for o in range(len(truth) - N + 1)]
    first = int(np.argmin(errors))
    return slice(first, first + N)


def _virtual(robot, settings, bus, **options):
    return VirtualRobot.for_capture(robot, settings, bus, **options)


@pytest.mark.parametrize("name", ["panda", "ariane"])
def test_a_capture_records_what_the_robot_did(tmp_path, name):
    robot, ref, bus, settings = _setup(name)
    with _virtual(robot, settings, bus, noise=0.0, seed=1) as sim:
        result = capture(robot, ref, tmp_path / "run.csv", settings=settings, bus=bus,
                         progress=False)
        truth = sim.truth
    rec = dynid.read_csv(tmp_path / "run.csv")
    assert rec.space == "actuator" and rec.output_kind == robot.output
    assert result.samples == rec.n_samples == round(ref.duration * settings.rate) + 1
    assert result.dropped == 0
    # The recorded samples are the drives' readings at consecutive SYNCs: drive time stamps
    # one period apart, and each row the true actuator positions and applied output of one
    # SYNC of the truth, within the encoder step and half a thousandth of the rated value.
    assert np.allclose(np.diff(rec.time), 1 / settings.rate, atol=1e-6)
    step = np.array([s.resolution for s in sim.scalings])
    np.testing.assert_array_equal(rec.resolution, step)  # the encoders' step, in the file
    rows = _aligned(rec.positions / step, truth.actuator / step)
    assert np.all(np.abs(rec.positions - truth.actuator[rows]) <= step / 2 + 1e-12)
    half = np.array([s.rated / 2000 for s in sim.scalings])
    assert np.all(np.abs(rec.output - truth.output[rows]) <= half + 1e-9)
    # The robot followed the trajectory: its joint positions stay within 5 % of the motion's
    # range of the reference (the drives' loops with the prior model fed forward).
    q_ref = ref.evaluate(rec.time - 1 / settings.rate)[0]  # sampled before its target
    err = np.abs(truth.q[rows] - q_ref).max(axis=0) / np.ptp(q_ref, axis=0)
    assert np.all(err < 0.05), err


def test_a_captured_recording_identifies_as_it_is_and_a_bus_log_decodes_to_it(tmp_path):
    robot, ref, bus, settings = _setup("ariane", periods=2, frequency=0.25)
    listener = can.Bus(interface="virtual", channel=bus.channel)
    asc, log = tmp_path / "bus.asc", tmp_path / "bus.log"
    loggers = [can.ASCWriter(asc), can.CanutilsLogWriter(log)]
    notifier = can.Notifier(listener, loggers)
    try:
        with _virtual(robot, settings, bus, noise=0.005, seed=2) as sim:
            capture(robot, ref, tmp_path / "run.csv", settings=settings, bus=bus,
                    progress=False)
    finally:
        notifier.stop()
        for w in loggers:
            w.stop()
        listener.shutdown()
    rec = dynid.read_csv(tmp_path / "run.csv")
    # Identification reads it as it is: OLS on the captured currents predicts them as well
    # as the true parameters do (both within a few percent).
    est = dynid.OLS().fit(dynid.IdentificationData(robot, [rec]))
    fitted = dynid.validate(robot, est.result_, rec).overall_relative_error
    true = dynid.validate(robot, sim.theta, rec).overall_relative_error
    assert fitted < 5 and fitted <= true * 1.05, (fitted, true)
    # The logs decode to the same samples (they also hold the ramps: find where they start).
    for path in (asc, log):
        dec = decode_log(path, mapping=settings.mapping, node_ids=settings.node_ids,
                         scalings=sim.scalings, names=robot.actuator_names,
                         output_kind=robot.output, timestamps="keep")
        rows = _aligned(np.hstack([rec.positions, rec.output]),
                        np.hstack([dec.positions, dec.output]))
        np.testing.assert_array_equal(dec.positions[rows], rec.positions)
        np.testing.assert_array_equal(dec.output[rows], rec.output)
        np.testing.assert_allclose(dec.time[rows] - dec.time[rows.start], rec.time, atol=1e-9)


def test_lost_frames_are_dropped_cycles_and_the_capture_goes_on(tmp_path):
    robot, ref, bus, settings = _setup("ariane", lockstep=False, feedback_timeout=2.0)
    with _virtual(robot, settings, bus, faults=Faults(drop=0.005), seed=3):
        result = capture(robot, ref, tmp_path / "run.csv", settings=settings, bus=bus,
                         progress=False)
    assert result.dropped > 0
    rec = dynid.read_csv(tmp_path / "run.csv", timestamps="keep")
    assert rec.n_samples == result.samples
    assert result.samples + result.dropped >= round(ref.duration * settings.rate) + 1


def _stopped(tmp_path, error, faults, lockstep=True, **settings_options):
    robot, ref, bus, settings = _setup("panda", lockstep=lockstep, **settings_options)
    path = tmp_path / "run.csv"
    with _virtual(robot, settings, bus, faults=faults, seed=5) as sim, \
            pytest.raises(error) as info:
        capture(robot, ref, path, settings=settings, bus=bus, progress=False)
    exc = info.value
    assert exc.path == path
    # Every flushed sample kept: metadata, header and one line per sample, readable when
    # there are enough samples to make a recording.
    assert path.read_text().count("\n") == 2 + exc.samples
    if exc.samples >= 10:
        assert dynid.read_csv(path, timestamps="keep").n_samples == exc.samples
    return exc, sim


def test_a_drive_fault_stops_the_capture_with_its_code(tmp_path):
    exc, sim = _stopped(tmp_path, DriveFaultError, Faults(fault_at=600, fault_drive=2))
    assert "node 3" in str(exc) and "0x2310" in str(exc) and exc.samples > 0
    # Every other drive was quick-stopped: they ended out of OPERATION ENABLED.
    assert all(d.state != "OPERATION ENABLED" for d in sim.drives)


def test_a_cut_cable_trips_the_watchdog(tmp_path):
    exc, _ = _stopped(tmp_path, CaptureTimeoutError, Faults(cut_at=600, cut_drive=4))
    assert "no complete feedback" in str(exc) and "5:" in str(exc) and exc.samples > 0


def test_late_feedback_beyond_the_watchdog_stops_the_capture(tmp_path):
    exc, _ = _stopped(tmp_path, CaptureTimeoutError, Faults(delay=0.2), lockstep=False)
    assert "no complete feedback" in str(exc)


def test_a_following_error_stops_the_capture(tmp_path):
    exc, sim = _stopped(tmp_path, FollowingError, None, following_error=1e-4)
    assert "position error" in str(exc)
    # The drives got their own window (0x6065) behind the capture's: twice its limit plus
    # one cycle's step of the targets, in increments, neither disabled nor tighter.
    for drive, sc in zip(sim.drives, sim.scalings, strict=True):
        assert 2e-4 / sc.resolution < drive.window < 0xFFFFFFFF


class _Frames(can.Listener):
    def __init__(self):
        self.frames = []

    def on_message_received(self, msg):
        self.frames.append(msg)


@pytest.mark.parametrize("case", ["trajectory", "budget", "range"])
def test_refusals_send_no_frame(tmp_path, case):
    robot, ref, bus, settings = _setup("panda")
    if case == "trajectory":
        ref, error = ref.scaled(4.0), TrajectoryError
    elif case == "budget":
        settings, error = replace(settings, rate=2000.0), BusBudgetError
    else:
        settings = replace(settings, nodes=tuple(
            replace(s, scaling=replace(s.scaling, resolution=1e-12)) for s in settings.nodes))
        error = dynid.DriveConfigError
    listener = can.Bus(interface="virtual", channel=bus.channel)
    frames = _Frames()
    notifier = can.Notifier(listener, [frames])
    try:
        with _virtual(robot, DriveSettings.defaults(robot), bus), pytest.raises(error):
            capture(robot, ref, tmp_path / "run.csv", settings=settings, bus=bus,
                    progress=False)
        time.sleep(0.05)
    finally:
        notifier.stop()
        listener.shutdown()
    boot = [f for f in frames.frames if 0x700 < f.arbitration_id < 0x780]  # the nodes' boot-up
    assert frames.frames == boot and not (tmp_path / "run.csv").exists()


def test_capture_command_on_the_simulated_robot(tmp_path, capsys):
    _, ref, _, _ = _setup("ariane")
    save_trajectory(tmp_path / "traj.json", ref)
    out = tmp_path / "run.csv"
    args = ["capture", "ariane", str(tmp_path / "traj.json"), "--interface", "virtual",
            "--channel", f"cli-{os.getpid()}", "--rate", "200", "-o", str(out), "--quiet"]
    assert main(args) == 0
    assert "recorded" in capsys.readouterr().out
    assert dynid.read_csv(out).n_samples > 100
    assert main(args) == 2                            # exists: refused, nothing moved
    assert "--overwrite" in capsys.readouterr().err
    fast = ref.scaled(4.0)
    save_trajectory(tmp_path / "fast.json", fast)
    args[2] = str(tmp_path / "fast.json")
    args[-2] = str(tmp_path / "fast.csv")
    assert main(args) == 2
    assert "violates" in capsys.readouterr().err


_CHILD = """
import sys
from dynid.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_capture_keeps_a_readable_file(tmp_path):
    _, ref, _, _ = _setup("ariane", periods=20)
    save_trajectory(tmp_path / "traj.json", ref)
    out = tmp_path / "run.csv"
    env = {**os.environ, "PYTHONPATH": str(Path(dynid.__file__).parents[1])}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, "capture", "ariane", str(tmp_path / "traj.json"),
         "--interface", "virtual", "--channel", f"kill-{os.getpid()}", "--rate", "200",
         "-o", str(out), "--quiet"], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (
                not out.exists() or out.read_text().count("\n") < 400):
            time.sleep(0.05)
        rows = out.read_text().count("\n") - 2
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL
    assert rows >= 398
    rec = dynid.read_csv(out)
    assert rec.n_samples >= rows
    assert np.allclose(np.diff(rec.time), 1 / 200, atol=1e-6)
