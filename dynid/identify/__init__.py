"""Identification: recordings, signal processing, estimators, uncertainty, validation."""
