"""Text tables of samples: CSV with or without a header, whitespace-separated columns.

A :class:`Table` is one text file of numbers: an optional header row (detected when not
said), then one row per line; its columns are resolved from its first rows before its values
are read. Columns are referred to by header name or by index (0 for the
first column). A signal stored flattened row-major (``n`` values per sample one after the other,
in one column or over the whole file, whatever its line breaks) is described by :class:`Flat`.

Every error names the file, the row (its line number in the file) or the column, what was
found and what was expected.
"""

from __future__ import annotations

import csv
import difflib
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._files import excerpt, name_list
from ..errors import DataError

__all__ = ["Flat", "Table", "check_delimiter", "delimiter_hint", "open_table"]

#: A column: its header name, or its index (0 for the first column).
Column = str | int


@dataclass(frozen=True)
class Flat:
    """A signal stored flattened row-major: ``n`` values per sample, sample after sample.

    Parameters
    ----------
    n
        Values per sample (the number of coordinates).
    column
        The column holding the values (name or index); ``None``: every value of the file, in
        reading order, whatever its line breaks (a file of ``N × n`` values on one line or in
        one column).

    Examples
    --------
    A file ``q.txt`` holding 7 joint positions per sample, one value per line::

        read_csv({"positions": "q.txt", "output": "tau.txt"}, rate=1000.0,
                 positions=Flat(7), output=Flat(7))
    """

    n: int
    column: Column | None = None

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int | np.integer) or self.n < 1:
            raise DataError(f"Flat: expected n ≥ 1 values per sample (a whole number), found "
                            f"{excerpt(self.n)}; e.g. Flat(7) for a 7-joint arm")
        if self.column is not None and not _is_column(self.column):
            raise DataError(f"Flat: expected a column name or index (0 = first), found "
                            f"{excerpt(self.column)}")


def _is_column(c: object) -> bool:
    return isinstance(c, str) or (isinstance(c, int | np.integer) and not isinstance(c, bool))


def check_delimiter(delimiter: object) -> str | None:
    """A valid field separator: one character that is not a quote or a line break, or ``None``
    for runs of spaces and tabs."""
    if delimiter is None:
        return None
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise DataError(f"delimiter: expected one character (not a quote or a line break), or "
                        f"None for columns separated by spaces or tabs, found "
                        f"{excerpt(delimiter)}; e.g. delimiter=';'")
    return delimiter


@dataclass(frozen=True, eq=False)
class Table:
    """A text file of samples, as its first rows describe it (:func:`open_table`); its values
    are read by :meth:`values` or :meth:`flat` once the columns are known.

    Attributes
    ----------
    path
        The file.
    header
        The header's fields, or ``None`` for a file without a header.
    width
        Number of columns (of the header, else of the first row).
    first
        Line number of the first sample.
    delimiter
        Field separator (``None``: spaces and tabs).
    hint
        When the first row is one field that another delimiter would split: which one.
    skip
        Lines before the header (or the first sample), not read.
    rows
        Sample rows read (``None``: every row of the file).
    """

    path: Path
    header: tuple[str, ...] | None
    width: int
    first: int
    delimiter: str | None
    hint: str = ""
    skip: int = 0
    rows: int | None = None

    @property
    def name(self) -> str:
        return self.path.name

    def index(self, column: Column, signal: str, example: str) -> int:
        """The index of a column (a header name or an index), checked."""
        width, hint = self.width, self.hint
        if isinstance(column, str):
            if self.header is None:
                raise DataError(f"{self.name} ({signal}): no header row, so no column is named "
                                f"{excerpt(column)}; give columns by index (0 = first of "
                                f"{width}), e.g. {example}")
            if column not in self.header:
                close = difflib.get_close_matches(column, self.header, n=3)
                if close and not hint:
                    hint = f"; did you mean {', '.join(repr(c) for c in close)}?"
                raise DataError(f"{self.name} ({signal}): no column {excerpt(column)}{hint} "
                                f"(available: {name_list(self.header, 300)}); e.g. {example}")
            if self.header.count(column) > 1:
                where = [i + 1 for i, h in enumerate(self.header) if h == column]
                raise DataError(f"{self.name}: column {column!r} ({signal}) appears "
                                f"{len(where)} times in the header (fields {where}); rename "
                                "the repeated columns, or give the column by index")
            return self.header.index(column)
        if not 0 <= column < width:
            raise DataError(f"{self.name} ({signal}): column index {column} is outside the "
                            f"file's {width} columns (0 to {width - 1}){hint}; e.g. {example}")
        return int(column)

    def values(self, used: Sequence[int] | None = None) -> np.ndarray:
        """The samples (rows, :attr:`width`); a cell of a column not in ``used`` (indices;
        default every column) may be NaN where it is not a number."""
        values = _fast(self, self.header is not None)
        if values is None:
            body = self._body()
            values = _slow(body, self, range(self.width) if used is None else sorted(set(used)))
        return values

    def flat(self) -> np.ndarray:
        """Every value of the file after its header in reading order, whatever the line
        breaks."""
        with _text(self.path) as f:
            for _ in range(self.skip):
                f.readline()
            text = f.read()
        if self.header is not None:  # the first line that is not blank
            text = text.lstrip().partition("\n")[2]
        if self.delimiter is not None:
            text = text.replace(self.delimiter, " ")
        try:  # numpy parses the text in one pass; row by row only to name a bad field
            return np.array(text.split(), dtype=float)
        except ValueError:
            return _flat_values(self._body(), self.path)

    def _body(self) -> list[tuple[int, list[str]]]:
        """The sample rows that are not blank, with their line numbers, split into fields."""
        body = _rows(self.path, self.delimiter, skip=self.skip)
        body = body[1:] if self.header is not None else body
        return body if self.rows is None else body[:self.rows]


def open_table(path: Path, *, header: bool | None, delimiter: str | None, skip: int = 0,
               rows: int | None = None) -> Table:
    """A text table described by its first rows.

    Parameters
    ----------
    header
        Whether the first row is a header; ``None``: it is when one of its fields is not a
        number.
    delimiter
        Field separator (``None``: spaces and tabs).
    skip
        Lines before the header (or the first sample), not read.
    rows
        Sample rows to read (``None``: every row).
    """
    head_rows = _rows(path, delimiter, limit=2, skip=skip)
    if header is None:
        header = bool(head_rows) and not all(_is_number(f) for f in head_rows[0][1])
    head = tuple(f.strip() for f in head_rows[0][1]) if header and head_rows else None
    if head and head[0].startswith("#"):  # numpy.savetxt's header: "# t,q1,..."
        head = (head[0][1:].strip(), *head[1:])
    if len(head_rows) < (2 if header else 1):
        what = " (a header row only)" if head_rows else ""
        raise DataError(f"{path.name}: expected {'a header row and ' if header else ''}"
                        f"samples, found {len(head_rows)} rows{what}")
    first = head_rows[1][0] if header else head_rows[0][0]
    width = len(head) if head is not None else len(head_rows[0][1])
    return Table(path, head, width, first, delimiter, delimiter_hint(head_rows[0][1], delimiter),
                 skip, rows)


def _is_number(text: str) -> bool:
    try:
        float(text.strip().strip('"'))
    except ValueError:
        return False
    return True


def _rows(path: Path, delimiter: str | None, limit: int | None = None, skip: int = 0
          ) -> list[tuple[int, list[str]]]:
    """The rows of the file that are not blank after its first ``skip`` lines, each with its
    line number, split into fields (the first ``limit`` rows only, when given)."""
    out: list[tuple[int, list[str]]] = []
    try:
        with _text(path) as f:
            for _ in range(skip):
                f.readline()
            if delimiter is None:
                for k, line in enumerate(f, skip + 1):
                    if line.strip():
                        out.append((k, line.split()))
                        if limit is not None and len(out) == limit:
                            break
                return out
            reader = csv.reader(f, delimiter=delimiter)
            for row in reader:
                if row and any(x.strip() for x in row):
                    out.append((skip + reader.line_num, row))
                    if limit is not None and len(out) == limit:
                        break
    except csv.Error as exc:
        raise DataError(f"{path.name}: not a readable CSV file ({exc}); is it a text file "
                        "of numbers in columns?") from None
    return out


@contextmanager
def _text(path: Path) -> Iterator:
    """The file opened as text: UTF-8 (a byte-order mark is skipped), or UTF-16 when it starts
    with a UTF-16 byte-order mark; bytes that are not text raise naming the file."""
    try:
        with path.open(newline="", encoding=_encoding(path)) as f:
            yield f
    except UnicodeError as exc:
        where = f" (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})" if isinstance(
            exc, UnicodeDecodeError) else ""
        raise DataError(f"{path.name}: not a UTF-8 text file{where}; a CSV recording is text "
                        "in columns. Is it a binary file (read .npz archives with "
                        "read_npz)?") from None


def _encoding(path: Path) -> str:
    with path.open("rb") as f:
        start = f.read(2)
    return "utf-16" if start in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"


def _fast(table: Table, header: bool) -> np.ndarray | None:
    """The samples read at once by numpy, or ``None`` when numpy cannot read them (a missing
    field, text, blank lines): the rows are then parsed one by one, which names a bad cell."""
    path, delimiter = table.path, table.delimiter
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # no samples: found row by row
            values = np.loadtxt(path, delimiter=delimiter, skiprows=table.skip + int(header),
                                max_rows=table.rows, ndmin=2, comments=None,
                                quotechar='"' if delimiter else None, dtype=float,
                                encoding=_encoding(path))
    except (ValueError, TypeError):
        return None
    return values if values.shape[0] and values.shape[1] == table.width else None


def _slow(body: list[tuple[int, list[str]]], table: Table, cols: Sequence[int]) -> np.ndarray:
    head, width = table.header, table.width
    values = np.full((len(body), width), np.nan)
    for r, (line, row) in enumerate(body):
        if len(row) != width:
            what = "the header has" if head is not None else f"row {table.first} has"
            raise DataError(f"{table.name}: row {line} has {len(row)} fields, {what} "
                            f"{width}{delimiter_hint(row, table.delimiter)}")
        for i in cols:
            try:
                values[r, i] = float(row[i])
            except ValueError:
                col = repr(head[i]) if head is not None else str(i)
                raise DataError(f"{table.name}: row {line}, column {col}: "
                                f"{excerpt(row[i])} is not a number") from None
    return values


def _flat_values(body: list[tuple[int, list[str]]], path: Path) -> np.ndarray:
    out = []
    for line, row in body:
        for field in row:
            if not field.strip():
                continue
            try:
                out.append(float(field))
            except ValueError:
                raise DataError(f"{path.name}: row {line}: {excerpt(field)} is not a number "
                                "(the file is read as one flat stream of numbers)") from None
    return np.array(out, dtype=float)


def delimiter_hint(row: Sequence[str], delimiter: str | None) -> str:
    """A hint when the first row is one field that another delimiter would split."""
    if len(row) != 1:
        return ""
    for other in (";", "\t", "|", ","):
        if other != delimiter and other in row[0].strip():
            return (f"; the first row is one field: are the columns separated by "
                    f"{other!r}? Pass delimiter={other!r} (--delimiter {other!r})")
    if delimiter is not None and len(row[0].split()) > 1:
        return ("; the first row is one field: are the columns separated by spaces? Pass "
                "delimiter=None (--delimiter space)")
    return ""
