"""Processing settings applied to one recording: what
:meth:`~dynid.identify.processing.Processing.apply` runs.

In this order: the channels' delays compensated
(:func:`~dynid.identify.compensation.compensate`) and the skipped samples dropped; with a
period, the periods averaged (:func:`~dynid.identify.periodic.average_periods`); actuator
coordinates mapped to the basis coordinates first when the kinematics are applied
``"before"`` filtering; positions filtered and differentiated
(:func:`~dynid.identify.states.derive_states`, or spectrally for an averaged period,
:func:`~dynid.identify.periodic.spectral_states`); the output low-passed only with an
``output_cutoff``; actuator coordinates mapped with their derivatives when the kinematics
are applied ``"after"`` (:func:`~dynid.identify.kinematics.to_basis`).

Every function takes the settings (a :class:`~dynid.identify.processing.Processing`, whose
automatic settings :func:`process` resolves first) and a :class:`~dynid.identify.recording.
Recording`, and returns a recording with basis-space positions, velocities and accelerations
(:func:`average`: the averaged period). They are bound as methods of
:class:`~dynid.identify.processing.Processing`, which their docstrings speak of:
:func:`process` as ``apply``, :func:`prepare` as ``prepared``, :func:`average` and
:func:`states` under their own names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DataError
from .compensation import compensate
from .filters import lowpass
from .kinematics import kinematics_order, map_first, to_basis
from .periodic import PeriodAverage, average_periods, spectral_states
from .recording import Recording
from .states import derivative_source, derive_states

if TYPE_CHECKING:
    from .processing import Processing

__all__ = ["average", "prepare", "process", "states"]


def process(settings: Processing, recording: Recording, robot=None) -> Recording:
    """Basis-space positions, velocities and accelerations and the output, processed
    (automatic settings chosen for this recording when not resolved)."""
    if not settings.resolved:
        return process(settings.resolve(recording), recording, robot)
    if settings.period is not None:
        return states(settings, average(settings, recording).recording, robot)
    return states(settings, prepare(settings, recording), robot)


def average(settings: Processing, recording: Recording) -> PeriodAverage:
    """The periods of a recording averaged as :meth:`apply` does, after the delays are
    compensated and the skipped samples and periods dropped."""
    if settings.period is None:
        raise DataError("period averaging needs the excitation period (period=...)")
    return average_periods(prepare(settings, recording), settings.period,
                           skip_periods=settings.skip_periods)


def prepare(settings: Processing, recording: Recording) -> Recording:
    """The raw recording with its channels' delays compensated
    (:func:`~dynid.identify.compensation.compensate`) and the skipped samples dropped."""
    rec = recording if settings.delay is None else compensate(recording, settings.delay)
    return rec.skip(settings.skip) if settings.skip else rec


def states(settings: Processing, rec: Recording, robot=None) -> Recording:
    """The rest of :meth:`apply`, on a recording whose samples were skipped and, with a
    period, whose periods were averaged (:meth:`average`): filtered positions, velocities
    and accelerations, mapped to the basis coordinates, and the output."""
    if rec.space == "actuator" and robot is None:
        raise DataError("the recording holds actuator coordinates; pass the robot to map "
                        "them to its basis coordinates")
    if not settings.resolved:
        raise DataError("processing: resolve the automatic settings first "
                        "(Processing.resolve(recordings))")
    if rec.space == "actuator" and kinematics_order(settings.kinematics, robot) == "before":
        rec = map_first(rec, robot)
    periodic = settings.period is not None
    if not periodic and (settings.cutoff is not None or settings.output_cutoff is not None) \
            and not rec.is_uniform(0.05):
        raise DataError("filtering needs uniformly sampled data; the sample intervals "
                        "vary by more than 5 %; resample first or set no cutoff")
    rate = rec.rate
    if periodic and (settings.harmonics_cutoff is not None or settings.cutoff is None):
        q, v, a = spectral_states(rec.positions, rate, settings.harmonics_cutoff)
    else:
        q, v, a = derive_states(rec, derivative_source(rec, settings.derivatives),
                                settings.cutoff, settings.order, periodic=periodic,
                                differentiation=settings.differentiation)
    y = rec.output
    if settings.output_cutoff is not None:
        y = lowpass(y, rate, settings.output_cutoff, settings.order, periodic=periodic)
    if rec.space == "actuator":
        q, v, a = to_basis(robot, rec.time, q, v, a)
        units = {**rec.units, "positions": robot.basis_units}
        rec = rec.with_signals(space="basis", names=robot.joint_names, units=units,
                               resolution=None)
    return rec.with_signals(positions=q, velocities=v, accelerations=a, output=y)
