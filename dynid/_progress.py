"""Progress bars on standard error, drawn by tqdm; silent when disabled."""

from __future__ import annotations

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
