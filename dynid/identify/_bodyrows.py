"""Rows of a robot carrying one more body: the robot's base columns beside the body's ten.

A payload fixed to a link adds the columns ``Y_link T(X)`` of an identified
:class:`~dynid.models.bodies.Body` (:mod:`dynid.models.bodies`). Payload identification and the
drive gains' payload method need those columns apart from the robot's own, which the robot's
base parameters would regroup them with. :class:`BodyRows` builds the robot with the body
attached and identification data whose "base" columns are the robot's base columns followed
by the body's ten, so that every processing step of
:class:`~dynid.identify.data.IdentificationData` (filters, decimation, dead zone, saturation)
applies to them unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..errors import DataError, ModelError
from ..models import BaseParameters, Body, Robot
from .data import IdentificationData
from .processing import Processing
from .recording import Recording

__all__ = ["BodyRows", "check_body"]


def check_body(body: object, name: str, example: str) -> Body:
    """``body`` when it is a :class:`Body`, else a :class:`ModelError` naming ``name`` and
    showing ``example``."""
    if not isinstance(body, Body):
        raise ModelError(f"{name}: expected a Body (where the payload is fixed and its "
                         f"inertia), found {type(body).__name__}; e.g. {example}")
    return body


class BodyRows:
    """A robot with ``body`` attached as an identified body, and its rows.

    Parameters
    ----------
    robot
        The robot without the body.
    body
        The body (its inertia is not used: its ten parameters are the extra columns).
    base
        The robot's base parameters.

    Attributes
    ----------
    robot
        The robot with the body.
    columns
        The base parameters whose regressor is ``[Y_b  Y_body]``: the robot's ``b`` base
        columns, then the body's ten (``Y_body π`` is the body's output for its
        parameters ``π`` in its frame).
    """

    def __init__(self, robot: Robot, body: Body, base: BaseParameters):
        self.body = replace(body, known=False)
        self.robot = replace(robot, bodies=(*robot.bodies, self.body))
        params = self.robot.parameters
        own = params.indices(base.parameters.names[i] for i in base.independent)
        extra = params.link_block(self.body.name)
        selected = np.concatenate([own, extra])
        rest = np.setdiff1d(np.arange(len(params)), selected)
        self.b = len(own)
        self.columns = BaseParameters(
            params, selected, rest, np.zeros((len(selected), len(rest))), base.tolerance,
            (*base.names, *(params.names[i] for i in extra)))

    def data(self, recordings: Sequence[Recording], processing: Processing
             ) -> IdentificationData:
        """Identification data of ``recordings`` on the robot with the body, processed by
        ``processing`` (resolved without a fit when automatic: a fit would need the body's
        parameters)."""
        recordings = tuple(recordings)
        if not isinstance(processing, Processing):
            raise DataError(f"processing: expected a Processing, found "
                            f"{type(processing).__name__}; e.g. processing=Processing("
                            "cutoff=20.0, decimate=10)")
        return IdentificationData(self.robot, recordings,
                                  processing=processing.resolve(recordings),
                                  base=self.columns)
