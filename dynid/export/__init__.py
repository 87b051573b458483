"""Exports of identified models: URDF and parameter files."""
