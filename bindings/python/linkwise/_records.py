"""Base classes of the Python API: a Record is one object of the JSON contract with typed
attributes; a RecordList is a list-like of Records with to_pandas(), to_dict(), to_json() and an
HTML table for Jupyter. Records hold the contract dict the core returned, unchanged."""

from __future__ import annotations

import copy
import html
import json
from typing import (Any, Callable, ClassVar, Generic, Iterator, Mapping, Sequence, TypeVar,
                    overload)

T = TypeVar("T")
R = TypeVar("R", bound="Record")


class Field(Generic[T]):
    """A typed, documented attribute of a Record, read from its contract dict under the same name.
    ``wrap`` turns a nested object into a Record (``plan.memory_gb.total``)."""

    def __init__(self, doc: str, wrap: Callable[[Any], T] | None = None) -> None:
        self.__doc__ = doc
        self._wrap = wrap
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Field[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = obj._data.get(self.name)
        if self._wrap is not None and value is not None:
            return self._wrap(value)
        return value


def _fields(cls: type) -> list[str]:
    """The contract field names a Record class declares, in declaration order (bases first)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, Field) and name not in names:
                names.append(name)
    return names


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _html_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Record:
    """One object of the JSON contract. Attributes are the contract's field names; ``to_dict()``
    returns the contract dict exactly as the CLI's ``--json`` and the REST service print it."""

    __slots__ = ("_data",)
    _summary: ClassVar[tuple[str, ...]] = ()  # fields shown by repr()

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data: dict[str, Any] = dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The contract dict (a deep copy: changing it does not change this object)."""
        return copy.deepcopy(self._data)

    def to_json(self, indent: int | None = None) -> str:
        """The contract as a JSON string."""
        return json.dumps(self._data, indent=indent)

    def __getitem__(self, field: str) -> Any:
        """The raw contract value of ``field`` (nested objects stay dicts)."""
        return self._data[field]

    def __getattr__(self, name: str) -> Any:
        # Contract fields this class does not declare (a newer core) are still readable.
        try:
            return object.__getattribute__(self, "_data")[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._data))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._data == self._data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = self._summary or tuple(_fields(type(self)))[:4]
        inner = ", ".join(f"{name}={self._data.get(name)!r}" for name in shown if name in self._data)
        return f"{type(self).__name__}({inner})"

    def _repr_html_(self) -> str:
        return _html_table(["field", "value"], [(k, v) for k, v in self._data.items()])


class RecordList(Sequence[R]):
    """A list of Records: indexing, len(), iteration, ``to_pandas()``, ``to_dict()``,
    ``to_json()`` and an HTML table in Jupyter."""

    _item: ClassVar[type[Record]] = Record
    _columns: ClassVar[tuple[str, ...]] = ()  # columns of the HTML table and repr()
    _flatten: ClassVar[bool] = False  # to_pandas: nested objects as "parent.child" columns

    def __init__(self, items: Sequence[Mapping[str, Any]] | Sequence[R]) -> None:
        self._items: list[R] = [
            item if isinstance(item, Record) else self._item(item)  # type: ignore[misc]
            for item in items]

    @overload
    def __getitem__(self, index: int) -> R: ...
    @overload
    def __getitem__(self, index: slice) -> RecordList[R]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[R]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and list(other) == self._items

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> list[dict[str, Any]]:
        """A list of contract dicts: the ``items`` of the CLI's ``--json`` (``to_contract()``)."""
        return [item.to_dict() for item in self._items]

    def to_contract(self) -> dict[str, Any]:
        """The whole document the CLI's ``--json`` and REST print for this list: {"total", "items"}."""
        return {"total": len(self._items), "items": self.to_dict()}

    def to_json(self, indent: int | None = None) -> str:
        """The contract array as a JSON string."""
        return json.dumps([item._data for item in self._items], indent=indent)

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per item, columns named as the JSON contract.
        pandas is imported here, not when linkwise is imported."""
        try:
            import pandas as pd  # type: ignore[import-untyped, unused-ignore]
        except ImportError as error:
            raise ImportError("to_pandas() needs pandas: pip install pandas "
                              "(or pip install 'linkwise[pandas]')") from error

        records = [item._data for item in self._items]
        if self._flatten:
            return pd.json_normalize(records, sep=".")
        columns = _fields(self._item)
        extra = [k for r in records for k in r if k not in columns]
        return pd.DataFrame.from_records(records, columns=columns + list(dict.fromkeys(extra)))

    def _table_columns(self) -> list[str]:
        return list(self._columns) or _fields(self._item)[:6]

    def _row(self, item: Record) -> list[Any]:
        return [_lookup(item._data, column) for column in self._table_columns()]

    def _repr_html_(self) -> str:
        return _html_table(self._table_columns(), [self._row(item) for item in self._items])

    def __repr__(self) -> str:
        columns = self._table_columns()
        rows = [[_cell(v) for v in self._row(item)] for item in self._items[:20]]
        widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths))]
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in rows]
        if len(self._items) > 20:
            lines.append(f"... {len(self._items) - 20} more")
        return f"{type(self).__name__} of {len(self._items)}\n" + "\n".join(lines)


def _lookup(data: Mapping[str, Any], dotted: str) -> Any:
    """data["memory_gb"]["total"] for "memory_gb.total"; None where any step is missing."""
    value: Any = data
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value
