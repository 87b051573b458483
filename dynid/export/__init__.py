"""Exports of identified models: parameter files (and URDF and MJCF for simulators)."""

from .parameters import ParameterFile, load_parameters, save_parameters

__all__ = ["ParameterFile", "load_parameters", "save_parameters"]
