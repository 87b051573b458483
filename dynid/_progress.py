"""Progress bars on standard error, drawn by tqdm; silent when disabled."""

from __future__ import annotations

import time
from typing import TextIO

from tqdm import tqdm


class Progress:
    """``label: 40%|████      | done/total [elapsed<left, text]``, updated in place.

    ``update(done, text)`` moves the bar to ``done`` (not by it) and sets the text after it;
    ``close()`` ends the line. Disabled, it draws nothing.
    """

    def __init__(self, total: int, label: str, *, enabled: bool = True,
                 stream: TextIO | None = None):
        self.total, self.enabled = max(1, int(total)), enabled
        self._bar = tqdm(total=self.total, desc=label, disable=not enabled, file=stream,
                         leave=True, mininterval=0.1, dynamic_ncols=True)

    @property
    def done(self) -> int:
        return int(self._bar.n)

    def update(self, done: int | None = None, text: str | None = None) -> None:
        if done is not None:
            self._bar.update(min(int(done), self.total) - self._bar.n)
        if text is not None:
            self._bar.set_postfix_str(text, refresh=False)

    def close(self) -> None:
        self._bar.close()


class Steps:
    """A task's steps, counted; their progress bar appears only once the task has taken more
    than ``delay`` seconds, so quick runs print nothing.

    ``next(text)`` starts the next step (``text`` says what it does); ``close()`` ends the bar
    at its end when every step ran, else where the task stopped.
    """

    def __init__(self, total: int, label: str, *, enabled: bool = True, delay: float = 1.0):
        self.total, self.label, self.enabled, self.delay = total, label, enabled, delay
        self.done = 0
        self.start = time.perf_counter()
        self.bar: Progress | None = None

    def next(self, text: str) -> None:
        if self.bar is None and self.enabled and time.perf_counter() - self.start > self.delay:
            self.bar = Progress(self.total, self.label, enabled=True)
        if self.bar is not None:
            self.bar.update(self.done, text)
        self.done += 1

    def close(self) -> None:
        if self.bar is not None:
            finished = self.done >= self.total
            self.bar.update(self.done, "done" if finished else "stopped")
            self.bar.close()
