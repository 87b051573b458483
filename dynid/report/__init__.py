"""Plots and identification reports."""
