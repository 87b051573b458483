"""Identification data: a robot, its recordings, how they are processed, and the system.

:class:`IdentificationData` processes each recording (:class:`~dynid.identify.processing.
Processing`), evaluates the base regressor chunk by chunk and accumulates the compressed
:class:`~dynid.identify.system.JointSystem`, so memory does not depend on the number of samples.
Estimators fit it (``OLS().fit(data)``).

Decimation (``Processing(decimate=D)``) is :mod:`dynid.identify.decimation`'s, applied chunk
by chunk.

Rows near zero velocity and samples at rest are left out as
:mod:`dynid.identify.exclusion` says: a joint's row at a (decimated) sample whose velocity is in
its dead zone; every row of a sample at rest, or, with decimation, whose filter window touches
one. The system keeps the other outputs' rows of such a sample
(:class:`~dynid.identify.system.JointSystem`), and the residuals hold NaN there.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from .._validate import is_number
from ..errors import DataError
from ..models import BaseParameters, Regressor, Robot, base_parameters
from ._chunkfilter import filter_margin
from .datachecks import check_informative, check_recording, pooled_covariance
from .decimation import _plan, decimate, decimated_flags, decimation_filter
from .exclusion import AUTO_REST, Excluded, Exclusion, auto_thresholds
from .filters import _signal
from .modelband import choose_model_cutoff, model_rows
from .outcome import Outcome
from .processing import Processing
from .recording import Recording
from .system import JointSystem

__all__ = ["CompressedData", "IdentificationData", "check_informative", "check_recording",
           "decimate", "decimated_flags", "decimation_filter", "pooled_covariance"]


class CompressedData:
    """A robot, its base parameters and a compressed system built from its data.

    Estimators fit this (or :class:`IdentificationData`, which builds it from recordings).
    Build it directly with :meth:`from_chunks` to stream data too large to hold in memory.

    Parameters
    ----------
    robot
        The model to identify.
    system
        The compressed system of the base regressor.
    base
        The base parameters the system's columns are (default: computed from the robot).
    processing
        The processing the data went through (recorded in results).
    output_covariance
        Output noise covariance (n, n) of one sample, when known.
    """

    def __init__(self, robot: Robot, system: JointSystem | None, *,
                 base: BaseParameters | None = None, processing: Processing | None = None,
                 output_covariance: np.ndarray | None = None):
        # system None: built later by a subclass (IdentificationData, from its recordings).
        self.robot = robot
        self.base = base if base is not None else base_parameters(robot)
        if self.base.parameters != robot.parameters:
            raise DataError("base: computed for another parameter set than the robot's")
        if system is not None and (system.n_outputs != robot.n or
                                   system.n_params != self.base.rank):
            raise DataError(f"system: expected {robot.n} outputs and {self.base.rank} base "
                            f"parameters, found {system.n_outputs} and {system.n_params}")
        self._system = system
        self.processing = processing or Processing(cutoff=None, decimate=1, deadzone=None)
        self._output_covariance = output_covariance

    @classmethod
    def from_chunks(cls, robot: Robot, chunks: Iterable[tuple[np.ndarray, ...]], *,
                    base: BaseParameters | None = None) -> CompressedData:
        """Accumulate chunks ``(q, v, a, y)`` of basis states and outputs (m, n) one at a time;
        memory does not depend on how many there are. A chunk ``(q, v, a, y, keep)`` leaves
        out the rows where ``keep`` (m, n) is false."""
        reg = Regressor(robot)
        base = base if base is not None else base_parameters(reg)
        system = JointSystem(robot.n, base.rank)
        for chunk in chunks:
            if len(chunk) not in (4, 5):
                raise DataError(f"chunks: expected (q, v, a, y) or (q, v, a, y, keep), found "
                                f"{len(chunk)} arrays")
            q, v, a, y = chunk[:4]
            Y, known = reg.affine(q, v, a)
            system.add(base.regressor(Y), np.asarray(y, dtype=float) - known,
                       chunk[4] if len(chunk) == 5 else None)
        return cls(robot, system, base=base)

    def system(self) -> JointSystem:
        return self._system

    @property
    def output_covariance(self) -> np.ndarray | None:
        return self._output_covariance


class IdentificationData(CompressedData):
    """Recordings of a robot, processed and compressed into the identification system.

    Parameters
    ----------
    robot
        The model to identify.
    recordings
        One or more recordings (stacked into one system).
    processing
        How each recording is processed (default: :class:`~dynid.identify.processing.
        Processing`'s defaults); automatic settings are chosen for these recordings by
        :func:`~dynid.identify.choice.choose_processing`, and the dead zone from the processed
        velocities (:mod:`dynid.identify.exclusion`). :attr:`processing` holds the numbers
        chosen for the filter and, in its ``outcome``, the effective cutoff, the dead zone
        used and the rows left out. With ``Processing(delay="estimate")`` the delays are
        estimated first (:func:`~dynid.identify.delays.estimate_delays`) and compensated.
    base
        Base parameters (default: computed from the robot).
    chunk_size
        Samples per regressor evaluation.
    drop_saturated
        Leave out samples whose output is flagged as saturated.

    Examples
    --------
    >>> data = IdentificationData(robot, [rec1, rec2])
    >>> print(data.processing.summary())
    >>> data = IdentificationData(robot, rec1, processing=Processing(deadzone=[0.05] * 6))
    """

    def __init__(self, robot: Robot, recordings: Recording | Sequence[Recording], *,
                 processing: Processing | None = None, base: BaseParameters | None = None,
                 chunk_size: int = 2048, drop_saturated: bool = True):
        self.robot = robot
        self.recordings = (recordings,) if isinstance(recordings, Recording) else \
            tuple(recordings)
        if not self.recordings:
            raise DataError("recordings: expected at least one recording")
        self.recordings = tuple(check_recording(robot, rec, reorder=True)
                                for rec in self.recordings)
        check_informative(self.recordings)
        self.regressor = Regressor(robot)
        base = base if base is not None else base_parameters(self.regressor)
        processing = processing or Processing()
        #: The delays estimated (``Processing(delay="estimate")``, :mod:`.delays`), else
        #: ``None``; the processing keeps them as its delay.
        self.estimated_delays = None
        if processing.delay == "estimate":
            from .delays import estimate_delays

            self.estimated_delays = estimate_delays(robot, self.recordings, processing,
                                                    base=base)
            processing = replace(processing, delay=self.estimated_delays)
        #: The automatic settings tried, with their scores (see :mod:`.choice`).
        self.candidates: tuple = ()
        if not processing.resolved:
            from .choice import choose_processing

            processing, self.candidates = choose_processing(robot, self.recordings,
                                                            processing, base)
        super().__init__(robot, None, processing=processing, base=base)
        self.chunk_size = int(chunk_size)
        self.drop_saturated = drop_saturated
        self._processed: tuple[Recording, ...] | None = None
        #: The dead zone and rests applied (``None``: no row left out).
        self.exclusion: Exclusion | None = None
        self.processing = self._resolve_exclusion(processing)
        if self.processing.model_cutoff == "auto":
            self.processing = replace(self.processing, model_cutoff=self._model_cutoff())

    def with_robot(self, robot: Robot, *, base: BaseParameters | None = None
                   ) -> IdentificationData:
        """The same recordings, processing and rows left out, for a robot that differs from
        this data's in its parameters and terms only (same coordinates and output); its system
        is built anew. Used to refit a model with other friction terms without processing the
        recordings again."""
        if (robot.n, robot.output, robot.joint_names) != \
                (self.robot.n, self.robot.output, self.robot.joint_names):
            raise DataError(f"with_robot: robot {robot.name} has other coordinates or output "
                            f"than {self.robot.name}; build IdentificationData(robot, "
                            "recordings) for it")
        out = copy.copy(self)
        out.robot, out.regressor = robot, Regressor(robot)
        out.base = base if base is not None else base_parameters(out.regressor)
        if out.base.parameters != robot.parameters:
            raise DataError("with_robot: base computed for another parameter set than the "
                            "robot's")
        out._system = None
        return out

    def _resolve_exclusion(self, processing: Processing) -> Processing:
        """The processing with its outcome: the dead zone and rests resolved for these data,
        and what they left out."""
        rate = min(r.rate for r in self.recordings)
        if processing.deadzone is None or (processing.deadzone == "auto" and
                                           processing.period is not None):
            return replace(processing, outcome=Outcome.of(processing.cutoff, processing.order,
                                                          rate, delays=self.estimated_delays))
        automatic = processing.deadzone == "auto"
        thresholds = auto_thresholds(processing, self.recordings, self.processed, self.robot) \
            if automatic else processing.deadzone
        rest = AUTO_REST if processing.rest == "auto" else processing.rest
        self.exclusion = Exclusion.for_robot(self.robot, thresholds, rest)
        excluded = self._count_excluded()
        peaks = np.max([np.abs(r.velocities).max(axis=0) for r in self.processed], axis=0)
        excluded.check(self.exclusion, peaks, self.robot.basis_units, automatic=automatic)
        return replace(processing, outcome=Outcome.of(processing.cutoff, processing.order, rate,
                                                      excluded, self.estimated_delays))

    def _model_cutoff(self) -> float | None:
        """The model filter's cutoff chosen on these recordings
        (:func:`~dynid.identify.modelband.choose_model_cutoff`), ``None`` with a period."""
        if self.processing.period is not None:
            return None
        keep = []
        for rec in self.processed:
            _, sat, rest, dead = self._masks(rec, 1)
            keep.append(~(rest[:, None] | dead | sat[:, None]))
        return choose_model_cutoff(self.regressor, self.base, self.processed,
                                   self.processing.order, keep)

    def _count_excluded(self) -> Excluded:
        D = int(self.processing.decimate)
        rows = np.zeros(self.robot.n, dtype=int)
        dead = np.zeros(self.robot.n, dtype=int)
        rest = 0
        seconds = 0.0
        for rec in self.processed:
            _, sat, at_rest, zone = self._masks(rec, D)
            rows += int((~sat).sum())
            dead += (zone & ~(sat | at_rest)[:, None]).sum(axis=0)
            rest += int((at_rest & ~sat).sum())
            if self.exclusion.rest is not None:
                still = self.exclusion.flags(rec)[1]
                seconds += float(still.sum()) / rec.rate
        return Excluded(tuple(self.robot.output_names),
                        tuple(float(t) for t in self.exclusion.thresholds), self.exclusion.rest,
                        tuple(int(r) for r in rows), tuple(int(d) for d in dead), rest, seconds)

    @property
    def processed(self) -> tuple[Recording, ...]:
        """The recordings after processing (basis coordinates with velocities and
        accelerations)."""
        if self._processed is None:
            self._processed = tuple(self.processing.apply(r, self.robot)
                                    for r in self.recordings)
        return self._processed

    @property
    def output_covariance(self) -> np.ndarray | None:
        """The output noise covariance of one sample of the system, known from the recordings
        (period averaging) when every recording has one: their average, weighted by samples,
        times ``Σ h²`` after decimation by the filter ``h`` (which filters the noise)."""
        cov = pooled_covariance(self.processed)
        D = int(self.processing.decimate)
        if cov is None or D == 1:
            return cov
        return cov * float(np.sum(decimation_filter(D) ** 2))

    def system(self) -> JointSystem:
        """The compressed system of the base regressor (built once)."""
        if self._system is None:
            self._system = self.compress(self.processed)
        return self._system

    def compress(self, recordings: Sequence[Recording], *, decimate: int | None = None
                 ) -> JointSystem:
        """The compressed system of processed recordings, decimated by ``decimate``
        (default: as this data's processing says)."""
        system = JointSystem(self.robot.n, self.base.rank)
        for Yb, y, keep in self.rows(recordings, decimate=decimate):
            system.add(Yb, y, keep)
        rows = int(system.rows.sum())
        if rows < self.base.rank:
            left = "" if rows == system.n_samples * self.robot.n else \
                f" ({rows} rows left after the dead zone and the rests)"
            raise DataError(f"identification: {system.n_samples} samples of {self.robot.n} "
                            f"outputs for {self.base.rank} base parameters{left}; record more "
                            "samples")
        return system

    def residuals(self, base_params: np.ndarray, recordings: Sequence[Recording] | None = None,
                  *, decimate: int | None = None) -> list[np.ndarray]:
        """The residual ``Y_b θ_b − y`` (m, n) of each processed recording (default: this
        data's), in time order, as the system saw it (decimated by ``decimate``, default as the
        processing says, without saturated samples), NaN at the rows left out."""
        D = int(self.processing.decimate if decimate is None else decimate)
        out = []
        for rec in self.processed if recordings is None else recordings:
            parts = [np.where(keep, Yb @ base_params - y, np.nan)
                     for Yb, y, keep in self._recording_rows(rec, D)]
            out.append(np.vstack(parts) if parts else np.zeros((0, self.robot.n)))
        return out

    def rows(self, recordings: Sequence[Recording] | None = None, *,
             decimate: int | None = None, states: Sequence[Recording] | None = None,
             output_error: bool = False
             ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Chunks ``(Y_b, y, keep)`` — base regressor (m, n, b), output less the known bodies'
        (m, n) and which rows are used (m, n), false near zero velocity and at rest — of
        processed recordings (default: this data's), decimated by ``decimate`` (default: as
        the processing says), without saturated samples.

        With ``states`` (processed recordings, one per recording, of the same samples): the
        regressor and the known bodies' output at their states instead, the rows and their
        mask still those of the recordings (the instruments of a closed-loop estimator). With
        ``output_error`` too: the output is the recordings' less the states' output (the
        output error of a simulated run), filtered and decimated alike."""
        D = int(self.processing.decimate if decimate is None else decimate)
        recordings = self.processed if recordings is None else recordings
        if states is None:
            states = recordings
        for rec, at in zip(recordings, states, strict=True):
            yield from self._recording_rows(rec, D, at, output_error)

    def _masks(self, rec: Recording, D: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The samples kept by decimation by ``D`` (all for 1), and at each: saturated (m,),
        at rest (m,) (with decimation: a flagged sample in the filter's window), and the rows
        in a dead zone (m, n) (at the kept sample itself)."""
        N = rec.n_samples
        sat = rec.saturated.any(axis=1) if self.drop_saturated else np.zeros(N, dtype=bool)
        if self.exclusion is None:
            dead, rest = np.zeros((N, self.robot.n), dtype=bool), np.zeros(N, dtype=bool)
        else:
            dead, rest = self.exclusion.flags(rec)
        if D == 1:
            return np.arange(N), sat, rest, dead
        centers = _plan(N, D)[2]
        return centers, decimated_flags(sat, D), decimated_flags(rest, D), dead[centers]

    def _recording_rows(self, rec: Recording, D: int, at: Recording | None = None,
                        output_error: bool = False
                        ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        at = rec if at is None else at
        if at.n_samples != rec.n_samples:
            raise DataError(f"states: {at.n_samples} samples where the recording has "
                            f"{rec.n_samples}; give states at every sample of the recording")
        q, v, a, y = at.positions, at.velocities, at.accelerations, rec.output
        if output_error:
            y = y - at.output
        centers, bad, rest, dead = self._masks(rec, D)
        use = ~(rest[:, None] | dead)
        C = self.chunk_size
        cutoff = self.processing.model_cutoff
        if is_number(cutoff):  # each chunk filtered from itself and the filter's margin,
            order = self.processing.order  # at least 4 margins long: at most 1.5 times the work
            C = max(C, 4 * filter_margin(rec.rate, cutoff, order))

            def rows(sl: slice) -> tuple[np.ndarray, np.ndarray]:
                Yb, known, ys = model_rows(self.regressor, self.base, rec, at, cutoff, order,
                                           output_error, rows=sl)
                return Yb, ys - known
        else:
            def rows(sl: slice) -> tuple[np.ndarray, np.ndarray]:
                Y, known = self.regressor.affine(q[sl], v[sl], a[sl])
                return self.base.regressor(Y), y[sl] - (0.0 if output_error else known)
        if D == 1:
            for start in range(0, rec.n_samples, C):
                sl = slice(start, start + C)
                keep = ~bad[sl]
                Yb, ys = rows(sl)
                yield Yb[keep], ys[keep], use[sl][keep]
            return
        h, L, _, first = _plan(rec.n_samples, D)
        per_chunk = max(1, C // D)
        for j0 in range(0, len(centers), per_chunk):
            c = centers[j0:j0 + per_chunk]
            sl = slice(c[0] - L, c[-1] + L + 1)
            Yb, ys = rows(sl)
            Yf = _signal().upfirdn(h, Yb, down=D, axis=0)[first:first + len(c)]
            yf = _signal().upfirdn(h, ys, down=D, axis=0)[first:first + len(c)]
            keep = ~bad[j0:j0 + len(c)]
            yield Yf[keep], yf[keep], use[j0:j0 + len(c)][keep]
