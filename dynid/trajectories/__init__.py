"""Excitation trajectories: Fourier series, constraints, design criteria, optimizers."""
