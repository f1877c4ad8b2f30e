# One micro-batch of a flat batch, padded on the right and laid out as the forward pass and the objective
# read it: trainer/engine/tfjs/train-step.ts `microBatchTensors` and trainer/engine/train-engine.ts
# `checkOnPolicy`, line for line. Leaves out which sequences go together (the trainer plans micro-batches).
#
# Legend: B = sequences in the micro-batch, T = its longest sequence (at least 2), T − 1 = targets.
from __future__ import annotations

from dataclasses import dataclass

import torch

from .errors import bad_request
from .tensors import FlatBatch


@dataclass(frozen=True)
class Padded:
    """Token ids padded on the right; what the forward pass needs."""

    ids: torch.Tensor  # [B, T] int64, pad_token_id after each sequence's end
    attention_mask: torch.Tensor  # [B, T] int64, 1 on real tokens
    position_ids: torch.Tensor  # [B, T] int64, 0..T−1 on every row (padding is masked out anyway)
    target_mask: torch.Tensor  # [B, T − 1] bool: where a log-prob is wanted
    tokens: int  # real tokens, prompts included
    padded_tokens: int  # B·T

    def to(self, device: torch.device) -> Padded:
        return Padded(
            self.ids.to(device),
            self.attention_mask.to(device),
            self.position_ids.to(device),
            self.target_mask.to(device),
            self.tokens,
            self.padded_tokens,
        )


def pad(batch: FlatBatch, indices: list[int], pad_token_id: int, target_name: str | None = None) -> Padded:
    """Pads sequences `indices`; the target mask is tensor `target_name`'s bits, or every real target."""
    b = len(indices)
    t = max(2, max(batch.lengths[i] for i in indices))  # at least one target column, as train-step.ts
    ids = torch.full((b, t), pad_token_id, dtype=torch.int64)  # [B, T]
    attention = torch.zeros((b, t), dtype=torch.int64)  # [B, T]
    targets = torch.zeros((b, t - 1), dtype=torch.bool)  # [B, T − 1]
    for row, index in enumerate(indices):
        n = batch.lengths[index]
        ids[row, :n] = batch.sequence_ids(index)
        attention[row, :n] = 1
        if target_name is None:
            targets[row, : n - 1] = True
        else:
            targets[row, : n - 1] = batch.target_slice(target_name, index) != 0
    positions = torch.arange(t, dtype=torch.int64).expand(b, t)  # [B, T]
    return Padded(ids, attention, positions, targets, batch.tokens(indices), b * t)


def idle_batch(pad_token_id: int) -> Padded:
    """One sequence of two padding tokens with one target: what a rank with no micro-batch in a round
    runs under FSDP (its loss times 0), so that it makes the same collectives as the others."""
    ids = torch.full((1, 2), pad_token_id, dtype=torch.int64)  # [1, 2]
    positions = torch.arange(2, dtype=torch.int64)[None]  # [1, 2]
    return Padded(ids, torch.ones_like(ids), positions, torch.ones((1, 1), dtype=torch.bool), 0, 0)


def check_target_bits(batch: FlatBatch, name: str) -> None:
    """A mask tensor of 0/1 bytes: anything else is a client bug worth naming."""
    values = batch.targets[name]
    bad = ((values != 0) & (values != 1)).nonzero()
    if len(bad):
        raise bad_request(f'tensor "{name}": entry {int(bad[0])} is {int(values[bad[0]])}, must be 0 or 1')


def check_on_policy(batch: FlatBatch) -> None:
    """train-step.ts `checkOnPolicy`: every trained target has a finite sampling log-prob or the flag."""
    trained = batch.targets["target_mask"] == 1  # [ΣT']
    flagged = batch.targets["on_policy"] == 1  # [ΣT']
    known = torch.isfinite(batch.targets["old_logprobs"])  # [ΣT']
    bad = (trained & ~flagged & ~known).nonzero()
    if len(bad):
        at = int(bad[0])
        sequence = max(i for i, start in enumerate(batch.target_starts) if start <= at and batch.lengths[i] > 1)
        raise bad_request(
            f"step: sequence {sequence}, target {at - batch.target_starts[sequence]} is trained with neither "
            "a finite old_logprobs entry nor the on_policy flag"
        )


def objective_batch(
    batch: FlatBatch, indices: list[int], width: int, advantages: torch.Tensor | None, device: torch.device
) -> dict:
    """The objective's view of the micro-batch (losses.py's `batch`), train-step.ts `microBatchTensors`.

    `width` is the padded T − 1; `advantages` is the flat batch's [N] (None for the replay: zeros, SFT
    reads none). Targets without a sampling log-prob (NaN) get 0 in old_logprobs; whether a trained
    target is on-policy is the trainer's decision, sent as `on_policy` (build-batch.ts).
    """
    b = len(indices)
    mask = torch.zeros((b, width), dtype=torch.float32)  # [B, T − 1]
    weights = "loss_weights" in batch.targets
    weighted = torch.zeros((b, width), dtype=torch.float32) if weights else mask  # [B, T − 1]
    old = torch.zeros((b, width), dtype=torch.float32)  # [B, T − 1]
    on_policy = torch.zeros((b, width), dtype=torch.bool)  # [B, T − 1]
    chosen = torch.zeros(b, dtype=torch.float32)  # [B]
    has_old = "old_logprobs" in batch.targets
    for row, index in enumerate(indices):
        n = batch.lengths[index] - 1
        bits = batch.target_slice("target_mask", index).to(torch.float32)  # [T − 1]
        mask[row, :n] = bits
        if weights:
            weighted[row, :n] = bits * batch.target_slice("loss_weights", index)
        if has_old:
            logprobs = batch.target_slice("old_logprobs", index)  # [T − 1]
            old[row, :n] = torch.where(torch.isfinite(logprobs), logprobs, torch.zeros_like(logprobs))
            on_policy[row, :n] = (bits == 1) & (batch.target_slice("on_policy", index) == 1)
        if advantages is not None:
            chosen[row] = advantages[index]
    return {
        "mask": mask.to(device),
        "weighted_mask": weighted.to(device),
        "old_logprobs": old.to(device),
        "on_policy": on_policy.to(device),
        "advantages": chosen.to(device),
        "ref_logprobs": None,
    }
