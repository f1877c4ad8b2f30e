# The ranks an engine runs on, as seen by the ops: one process (this file, no torch needed) or several
# (distributed.py). Leaves out how several are started and how they talk.
from __future__ import annotations


class SingleProcess:
    """World size 1: every collective is the identity."""

    rank = 0
    size = 1

    def share(self, plan: list) -> list[tuple[int, list[int]]]:
        return list(enumerate(plan))

    def gather(self, items: list) -> list | None:
        return list(items)

    def sum_ints(self, values: list[int]) -> list[int]:
        return [int(v) for v in values]

    def sum_gradients(self, parameters: list) -> None:
        pass

    def broadcast_parameters(self, parameters: list) -> None:
        pass

    def raise_first(self, error: BaseException | None) -> None:
        if error is not None:
            raise error

    def outcomes(self, failure: tuple[str, str] | None) -> list[tuple[str, str] | None]:
        """Every rank's (code, message) or None, in rank order, the same list on every rank."""
        return [failure]
