"""A one-line text progress bar on standard error (no dependency)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Draws ``label [#####.....] done/total  text`` in place; silent when disabled."""

    def __init__(self, total: int, label: str, *, enabled: bool = True,
                 stream: TextIO | None = None, width: int = 30):
        self.total, self.label, self.enabled = max(1, int(total)), label, enabled
        self.stream = stream or sys.stderr
        self.width, self.done, self.text = width, 0, ""
        self._t0, self._last = time.perf_counter(), 0.0

    def update(self, done: int | None = None, text: str | None = None) -> None:
        if done is not None:
            self.done = min(int(done), self.total)
        if text is not None:
            self.text = text
        now = time.perf_counter()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            fill = int(self.width * self.done / self.total)
            bar = "#" * fill + "." * (self.width - fill)
            self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} "
                              f"{now - self._t0:5.1f} s  {self.text}   ")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._last = 0.0
            self.update()
            self.stream.write("\n")
            self.stream.flush()
