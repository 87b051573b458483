"""The finite-difference check used by the derivative tests: its bound holds, it sees a small
error, and it refuses to judge where it cannot resolve one."""

from __future__ import annotations

import numpy as np
import pytest
from numerics import assert_derivative, derivative


def noisy(f, level, seed=0):
    """``f`` with relative noise of ``level`` on every value, as a long computation rounds."""
    rng = np.random.default_rng(seed)
    return lambda x: f(x) * (1 + level * rng.uniform(-1, 1, np.shape(f(x))))


@pytest.mark.parametrize("level", [0.0, 1e-13])
def test_bound_holds_and_a_small_error_is_seen(level):
    x = np.linspace(-2, 2, 7)
    f = noisy(lambda x: np.exp(x) * np.sin(3 * x), level)
    exact = np.exp(x) * (np.sin(3 * x) + 3 * np.cos(3 * x))
    fd = derivative(f, x, np.ones_like(x))
    assert np.all(np.abs(fd.value - exact) <= fd.error)
    assert_derivative(exact, fd)
    wrong = exact.copy()
    wrong[np.argmax(np.abs(exact))] *= 1 + 1e-4
    with pytest.raises(AssertionError, match="exceed the tolerance"):
        assert_derivative(wrong, fd)


def test_a_kink_within_the_longest_steps_takes_shorter_ones():
    """|x − 2e-4| at x = 0 (its kink 2e-4 away, within the longest step 1e-3): the shorter
    steps of the ladder give the slope −1."""
    fd = derivative(lambda x: np.abs(x - 2e-4), np.zeros(1), np.ones(1))
    assert_derivative(-np.ones(1), fd)


def test_too_much_noise_is_reported_not_passed():
    fd = derivative(noisy(lambda x: 1 + np.sin(x), 1e-6), np.zeros(1), np.ones(1))
    with pytest.raises(AssertionError, match="too inaccurate"):
        assert_derivative(np.ones(1), fd, resolution=1e-5)
