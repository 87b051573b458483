"""Best-of timing shared by the benchmark scripts."""

from __future__ import annotations

import time


def best_of(fn, repeat: int = 3) -> float:
    """Shortest wall time of ``repeat`` calls of ``fn``, seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def extended_and_bare(regressors, q, v, a, rounds: int) -> tuple[list[float], float]:
    """Best times of each extended regressor on the basis states (q, v, a) and of Pinocchio's
    bare joint-torque regressor on the same tree states, interleaved so that all see the same
    machine state. The regressors share one robot tree."""
    import pinocchio as pin

    robot = regressors[0].robot
    q_t, v_t, a_t, _ = robot.closure.tree_state(q, v, a)
    cfg = robot.tree.configuration(q_t)
    model, data = robot.tree.model, robot.tree.model.createData()

    def extended(reg):
        for _ in reg.chunks(q, v, a):
            pass

    def bare():
        f = pin.computeJointTorqueRegressor
        for k in range(q.shape[0]):
            f(model, data, cfg[k], v_t[k], a_t[k])

    times, t_bare = [float("inf")] * len(regressors), float("inf")
    for _ in range(rounds):
        times = [min(t, best_of(lambda reg=reg: extended(reg), 1))
                 for t, reg in zip(times, regressors, strict=True)]
        t_bare = min(t_bare, best_of(bare, 1))
    return times, t_bare
