# Reading a request's `args` object with checks that name the bad field (engine-bad-request).
# Leaves out what each op does with them.
from __future__ import annotations

import math

from .errors import bad_request

_MISSING = object()


class Args:
    """Typed access to `args`; `where` prefixes every message (e.g. "step: normaliser.tokens")."""

    def __init__(self, values: object, where: str) -> None:
        if values is None:
            values = {}
        if not isinstance(values, dict):
            raise bad_request(f"{where}: args must be an object")
        self.values = values
        self.where = where

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}"

    def raw(self, key: str, default=_MISSING):
        """The value, or `default` when absent or null; absent without a default is an error."""
        value = self.values.get(key)
        if value is not None:
            return value
        if default is _MISSING:
            raise bad_request(f"{self._name(key)} is required")
        return default

    def string(self, key: str, default=_MISSING, choices: tuple[str, ...] | None = None) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str):
            raise bad_request(f"{self._name(key)} must be a string, got {value!r}")
        if choices is not None and value not in choices:
            raise bad_request(f"{self._name(key)} must be one of {', '.join(choices)}, got {value!r}")
        return value

    def boolean(self, key: str, default=_MISSING) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise bad_request(f"{self._name(key)} must be true or false, got {value!r}")
        return value

    def integer(self, key: str, default=_MISSING, minimum: int | None = None) -> int:
        value = self.raw(key, default)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad_request(f"{self._name(key)} must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise bad_request(f"{self._name(key)} must be >= {minimum}, got {value}")
        return value

    def number(
        self,
        key: str,
        default=_MISSING,
        minimum: float | None = None,
        below: float | None = None,
        positive: bool = False,
    ) -> float:
        value = self.raw(key, default)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise bad_request(f"{self._name(key)} must be a finite number, got {value!r}")
        if minimum is not None and value < minimum:
            raise bad_request(f"{self._name(key)} must be >= {minimum}, got {value}")
        if below is not None and value >= below:
            raise bad_request(f"{self._name(key)} must be < {below}, got {value}")
        if positive and value <= 0:
            raise bad_request(f"{self._name(key)} must be > 0, got {value}")
        return float(value)

    def optional_number(self, key: str, positive: bool = False) -> float | None:
        if self.values.get(key) is None:
            return None
        return self.number(key, positive=positive)

    def object(self, key: str, default=_MISSING) -> Args:
        value = self.raw(key, default)
        if not isinstance(value, dict):
            raise bad_request(f"{self._name(key)} must be an object, got {value!r}")
        return Args(value, self._name(key))

    def optional_object(self, key: str) -> Args | None:
        if self.values.get(key) is None:
            return None
        return self.object(key)

    def string_list(self, key: str, default=_MISSING) -> list[str]:
        value = self.raw(key, default)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise bad_request(f"{self._name(key)} must be a non-empty list of strings, got {value!r}")
        return list(value)

    def index_lists(self, key: str, count: int) -> list[list[int]]:
        """Lists of indices into `count` items that together name every item exactly once."""
        value = self.raw(key)
        name = self._name(key)
        if not isinstance(value, list) or not value:
            raise bad_request(f"{name} must be a non-empty list of lists of sequence indices")
        seen = [0] * count
        out = []
        for b, members in enumerate(value):
            if not isinstance(members, list) or not members:
                raise bad_request(f"{name}[{b}] must be a non-empty list of sequence indices")
            for member in members:
                if not isinstance(member, int) or isinstance(member, bool) or not 0 <= member < count:
                    raise bad_request(f"{name}[{b}] holds {member!r}, not an index in [0, {count})")
                seen[member] += 1
            out.append(list(members))
        wrong = [i for i, n in enumerate(seen) if n != 1]
        if wrong:
            raise bad_request(
                f"{name} must name every sequence exactly once; sequence {wrong[0]} appears {seen[wrong[0]]} times"
            )
        return out
