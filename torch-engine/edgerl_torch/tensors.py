# Protocol tensors ↔ torch, and the flat layout of a batch of sequences (docs/torch-engine.md "Frames":
# `lengths` [N], `ids` [ΣT], per-target arrays [Σ(T − 1)], entry t of a sequence describing its token
# t + 1, as trainer/train/build-batch.ts aligns them). Leaves out padding (batch.py).
#
# Legend: N = sequences, ΣT = their tokens end to end, ΣT' = Σ(T − 1) targets end to end.
from __future__ import annotations

from dataclasses import dataclass

import torch

from .errors import bad_request
from .protocol import TensorView

_TORCH_DTYPES = {"int32": torch.int32, "float32": torch.float32, "uint8": torch.uint8}
_PROTOCOL_DTYPES = {value: key for key, value in _TORCH_DTYPES.items()}


def to_torch(view: TensorView) -> torch.Tensor:
    """A CPU tensor viewing the payload's bytes (no copy; the payload outlives the request)."""
    dtype = _TORCH_DTYPES[view.dtype]
    if view.count == 0:
        return torch.empty(view.shape, dtype=dtype)
    return torch.frombuffer(view.data, dtype=dtype).reshape(view.shape)  # [count] → the header's shape


def from_torch(tensor: torch.Tensor) -> tuple[str, tuple[int, ...], bytes]:
    """(dtype, shape, bytes) for protocol.encode_frame; little-endian on every platform torch ships for."""
    tensor = tensor.detach().to("cpu").contiguous()
    if tensor.dtype not in _PROTOCOL_DTYPES:
        raise TypeError(f"no protocol dtype for {tensor.dtype}")
    return _PROTOCOL_DTYPES[tensor.dtype], tuple(tensor.shape), tensor.numpy().tobytes()


def tensor_arg(
    tensors: dict[str, TensorView],
    name: str,
    dtype: str,
    count: int | None = None,
    optional: bool = False,
) -> torch.Tensor | None:
    """A 1-D request tensor of the given dtype (and length), or bad-request naming it."""
    view = tensors.get(name)
    if view is None:
        if optional:
            return None
        raise bad_request(f'tensor "{name}" ({dtype}) is required')
    if view.dtype != dtype:
        raise bad_request(f'tensor "{name}" must be {dtype}, got {view.dtype}')
    if len(view.shape) != 1:
        raise bad_request(f'tensor "{name}" must be 1-D, got shape {list(view.shape)}')
    if count is not None and view.shape[0] != count:
        raise bad_request(f'tensor "{name}" must have {count} entries, got {view.shape[0]}')
    return to_torch(view)


@dataclass(frozen=True)
class FlatBatch:
    """N sequences end to end; per-target arrays (masks, logprobs) keyed by name, each [ΣT']."""

    lengths: list[int]
    ids: torch.Tensor  # [ΣT] int64
    token_starts: list[int]  # where sequence i's ids begin in `ids`
    target_starts: list[int]  # where sequence i's targets begin in a [ΣT'] array
    targets: dict[str, torch.Tensor]

    @property
    def size(self) -> int:
        return len(self.lengths)

    def sequence_ids(self, index: int) -> torch.Tensor:
        start = self.token_starts[index]
        return self.ids[start : start + self.lengths[index]]  # [T]

    def target_slice(self, name: str, index: int) -> torch.Tensor:
        start = self.target_starts[index]
        return self.targets[name][start : start + self.lengths[index] - 1]  # [T − 1]

    def tokens(self, indices: list[int]) -> int:
        return sum(self.lengths[i] for i in indices)


def flat_batch(
    tensors: dict[str, TensorView],
    vocab_size: int,
    prefix: str = "",
    target_specs: tuple[tuple[str, str, bool], ...] = (),
) -> FlatBatch:
    """Reads `<prefix>lengths`, `<prefix>ids` and the named per-target tensors ((name, dtype, optional)),
    checking every length against the others and every id against the vocabulary."""
    lengths_t = tensor_arg(tensors, f"{prefix}lengths", "int32")
    lengths = [int(n) for n in lengths_t.tolist()]
    if not lengths:
        raise bad_request(f'tensor "{prefix}lengths" is empty: no sequences')
    short = [i for i, n in enumerate(lengths) if n < 1]
    if short:
        raise bad_request(f'tensor "{prefix}lengths": sequence {short[0]} has length {lengths[short[0]]}, must be >= 1')
    total = sum(lengths)
    ids = tensor_arg(tensors, f"{prefix}ids", "int32", count=total).to(torch.int64)  # [ΣT]
    if total and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        bad = int(((ids < 0) | (ids >= vocab_size)).nonzero()[0])
        raise bad_request(
            f'tensor "{prefix}ids": entry {bad} is {int(ids[bad])}, outside the vocabulary [0, {vocab_size})'
        )
    target_total = total - len(lengths)
    targets = {}
    for name, dtype, optional in target_specs:
        tensor = tensor_arg(tensors, f"{prefix}{name}", dtype, count=target_total, optional=optional)
        if tensor is not None:
            targets[name] = tensor
    token_starts, target_starts = [], []
    token_at = target_at = 0
    for n in lengths:
        token_starts.append(token_at)
        target_starts.append(target_at)
        token_at += n
        target_at += n - 1
    return FlatBatch(lengths, ids, token_starts, target_starts, targets)
