# Op `step`: one optimiser step on the adapter, with trainer/engine/tfjs/train-step.ts's semantics: the
# trainer's micro-batches, each one forward and one backward (plus a no-grad forward with the adapter off when
# beta > 0), every loss already divided by the step's normaliser so the accumulated gradient is the
# batch's; the replayed sequences' SFT gradient times `weight` added; global-norm clip; AdamW. Under
# --sharding fsdp the same step on sharded parameters, every rank in lockstep (idle ranks run a pass too).
# Leaves out the loss (losses.py), planning micro-batches (the trainer), the moments' file and sharding.
#
# Legend: B = sequences in a micro-batch, T = its longest sequence, T − 1 = targets, P = adapter entries.
from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass

import torch

from . import fsdp
from .args import Args
from .batch import Padded, check_on_policy, check_target_bits, idle_batch, objective_batch, pad
from .errors import EngineError, bad_request
from .logprobs import final_hidden, target_logprobs
from .losses import check_grpo_options, objective_loss
from .tensors import FlatBatch, flat_batch, tensor_arg


@dataclass
class Part:
    """The main batch or the replay: its sequences, micro-batches, objective, normaliser and gradient weight."""

    batch: FlatBatch
    plan: list[list[int]]
    objective: dict
    normaliser: dict
    weight: float
    advantages: torch.Tensor | None


def _normaliser(args: Args) -> dict:
    return {"tokens": args.integer("tokens", minimum=1), "sequences": args.integer("sequences", minimum=1)}


def _objective(args: Args) -> dict:
    objective = args.raw("objective")
    kind = objective.get("kind") if isinstance(objective, dict) else None
    if kind == "sft":
        return {"kind": "sft"}
    if kind == "grpo":
        loss = Args(objective, "step.objective").object("loss")
        beta = loss.number("beta", minimum=0)
        try:
            # Before any pass, so that no rank fails between the collectives of one (fsdp.py).
            check_grpo_options(loss.values, has_ref=beta > 0)
        except ValueError as error:
            raise bad_request(f"step.objective.loss: {error}") from error
        return {"kind": "grpo", "loss": loss.values}
    raise bad_request(f'step.objective.kind must be "grpo" or "sft", got {kind!r}')


def read_step(session, args: Args, tensors: dict) -> tuple[list[Part], dict]:
    """The request's parts (main, then replay if any) and its scalar settings, all checked."""
    vocab = session.require_model().vocab_size
    pad_token_id = args.integer("pad_token_id", minimum=0)
    if pad_token_id >= vocab:
        raise bad_request(f"step.pad_token_id is {pad_token_id}, outside the vocabulary [0, {vocab})")
    settings = {
        "learning_rate": args.number("learning_rate", minimum=0),
        "max_grad_norm": args.optional_number("max_grad_norm", positive=True),
        "pad_token_id": pad_token_id,
    }
    batch = flat_batch(
        tensors,
        vocab,
        target_specs=(
            ("target_mask", "uint8", False),
            ("old_logprobs", "float32", False),
            ("on_policy", "uint8", False),
            ("loss_weights", "float32", True),
        ),
    )
    check_target_bits(batch, "target_mask")
    check_target_bits(batch, "on_policy")
    check_on_policy(batch)
    parts = [
        Part(
            batch,
            args.index_lists("micro_batches", batch.size),
            _objective(args),
            _normaliser(args.object("normaliser")),
            1.0,
            tensor_arg(tensors, "advantages", "float32", count=batch.size),
        )
    ]
    replay = args.optional_object("replay")
    if replay is not None:
        replayed = flat_batch(
            tensors,
            vocab,
            prefix="replay_",
            target_specs=(("target_mask", "uint8", False), ("loss_weights", "float32", True)),
        )
        check_target_bits(replayed, "target_mask")
        # Its own normaliser (train-step.ts): the replayed loss is a token mean over its own tokens, so
        # `weight` means the same whatever the GRPO part's size.
        parts.append(
            Part(
                replayed,
                replay.index_lists("micro_batches", replayed.size),
                {"kind": "sft"},
                _normaliser(replay.object("normaliser")),
                replay.number("weight", minimum=0),
                None,
            )
        )
    return parts, settings


def _beta(part: Part) -> float:
    return part.objective["loss"]["beta"] if part.objective["kind"] == "grpo" else 0


def _passes(session, padded: Padded, beta: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The forward passes of one micro-batch: with beta > 0 first the reference policy's, the base model
    (adapter off, no gradient, no dropout), then the adapter's with gradient. Returns the final hidden
    states [B, T, H], the target log-probs [B, T − 1] and the reference's (or None)."""
    loaded = session.loaded
    causal_lm, chunk = loaded.causal_lm, loaded.logprob_chunk_tokens
    ref = None
    if beta > 0:
        causal_lm.eval()
        with torch.no_grad(), session.adapter_context(False):
            ref = session.forward(lambda: target_logprobs(causal_lm, final_hidden(causal_lm, padded), padded, chunk))
        causal_lm.train()

    def run():
        hidden = final_hidden(causal_lm, padded)  # [B, T, H]
        return hidden, target_logprobs(causal_lm, hidden, padded, chunk)  # [B, T, H], [B, T − 1]

    hidden, logprobs = session.forward(run)
    return hidden, logprobs, ref


def _backward(session, loss: torch.Tensor, hidden: torch.Tensor) -> None:
    if loss.requires_grad:
        loss.backward()
    elif session.root is not None:
        # No trained target in this micro-batch, so no gradient; under FSDP the backward pass is a
        # collective (reduce-scatter per layer) all ranks make, so make it anyway, with gradient 0.
        (hidden.float().sum() * 0.0).backward()


def _micro_batch(session, part: Part, members: list[int], pad_token_id: int) -> tuple[dict, int, int]:
    """Forward and backward of one micro-batch; its loss sums (floats), real and padded tokens."""
    loaded = session.loaded
    padded = pad(part.batch, members, pad_token_id, target_name="target_mask").to(loaded.device)
    batch = objective_batch(part.batch, members, padded.target_mask.shape[1], part.advantages, loaded.device)
    hidden, logprobs, batch["ref_logprobs"] = _passes(session, padded, _beta(part))
    try:
        sums = objective_loss(part.objective, logprobs, batch, part.normaliser)
    except ValueError as error:  # losses.py's checks of the objective's options
        raise bad_request(f"step.objective: {error}") from error
    # The replay's gradient times its weight (train-step.ts multiplies the accumulated gradient; the
    # backward pass is linear, so scaling the loss gives the same sum without a second buffer).
    loss = sums["loss"]
    _backward(session, loss * part.weight if part.weight != 1.0 else loss, hidden)
    names = list(sums)
    values = torch.stack([sums[name].detach().float() for name in names]).tolist()  # [sums], one device read
    return dict(zip(names, values, strict=True)), padded.tokens, padded.padded_tokens


def _idle_pass(session, part: Part, pad_token_id: int) -> None:
    """FSDP only, a rank with no micro-batch this round: the same passes as the others (fsdp.py) on a
    two-token sequence of padding, its loss times 0, so nothing is added to the gradient."""
    padded = idle_batch(pad_token_id).to(session.loaded.device)
    hidden, logprobs, _ = _passes(session, padded, _beta(part))
    _backward(session, logprobs.sum() * 0.0, hidden)


def _run_part(session, part: Part, pad_token_id: int, emit) -> tuple[list[dict], int, int]:
    """This rank's share of a part's micro-batches, dealt round-robin; progress summed over ranks after
    each round, so every rank runs the same number of collectives even when one fails."""
    world = session.world
    local, tokens, padded_tokens = [], 0, 0
    error: BaseException | None = None
    done = total_tokens = 0
    rounds = math.ceil(len(part.plan) / world.size)
    for round_index in range(rounds):
        index = round_index * world.size + world.rank
        finished = round_tokens = 0
        if error is None and index < len(part.plan):
            try:
                sums, real, padded = _micro_batch(session, part, part.plan[index], pad_token_id)
                local.append((index, sums))
                tokens, padded_tokens = tokens + real, padded_tokens + padded
                finished, round_tokens = 1, real
            except Exception as caught:  # reported after the round, by raise_first below
                error = caught
        elif error is None and session.root is not None:
            try:
                _idle_pass(session, part, pad_token_id)
            except Exception as caught:
                error = caught
        finished, round_tokens, failed = world.sum_ints([finished, round_tokens, int(error is not None)])
        done, total_tokens = done + finished, total_tokens + round_tokens
        if failed:
            break
        if emit is not None:
            emit("micro-batch", {"done": done, "total": len(part.plan), "tokens": total_tokens})
            _pause_for_tests()
    world.raise_first(error)
    ordered = world.gather(local)
    sums_list = [sums for _, sums in sorted(ordered, key=lambda item: item[0])] if ordered is not None else []
    real, padded = world.sum_ints([tokens, padded_tokens])
    return sums_list, real, padded


def _pause_for_tests() -> None:
    """EDGERL_TORCH_PAUSE_IN_STEP=1 (the fault suite only): stop inside the step after its first micro-batch,
    say so on stderr and wait to be killed, so a test can kill -9 an engine (or its trainer) mid-step."""
    if os.environ.get("EDGERL_TORCH_PAUSE_IN_STEP") != "1":
        return
    print("edgerl_torch: paused in step (EDGERL_TORCH_PAUSE_IN_STEP)", file=sys.stderr, flush=True)
    while True:
        time.sleep(60)


def grad_norm(parameters: list[torch.nn.Parameter], sharded: bool = False) -> torch.Tensor:
    """‖g‖₂ over every gradient laid end to end, as torch.nn.utils.clip_grad_norm_ computes it; of
    sharded gradients, over every rank's shards (fsdp.py)."""
    if sharded:
        return fsdp.grad_norm(parameters)
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in parameters]))  # []


def train_step(session, args: Args, tensors: dict, emit) -> dict:
    optimizer = session.require_optimizer()
    parts, settings = read_step(session, args, tensors)
    started = time.perf_counter()
    parameters = [p for _, p in session.trainable()]
    causal_lm = session.loaded.causal_lm
    sharded = session.root is not None
    optimizer.zero_grad(set_to_none=True)
    causal_lm.train()  # LoRA dropout on, gradient checkpointing active (HF checks `training`)
    try:
        results = [
            _run_part(session, part, settings["pad_token_id"], emit if index == 0 else None)
            for index, part in enumerate(parts)
        ]
        for p in parameters:
            if p.grad is None:  # a matrix no loss reached (no trained token anywhere): its gradient is 0
                p.grad = torch.zeros_like(p)
        if not sharded:  # FSDP summed them already, reduce-scattering each layer's in backward (fsdp.py)
            session.world.sum_gradients(parameters)
        total_norm = grad_norm(parameters, sharded)  # []
        norm = float(total_norm)
        if not math.isfinite(norm):
            raise EngineError(
                "engine-nonfinite-gradient", f"step: the gradient norm is {norm}; the step was not applied"
            )
        max_norm = settings["max_grad_norm"]
        if max_norm is not None:
            # torch.nn.utils.clip_grad_norm_'s rule and arithmetic (clip-grad-norm.ts's too):
            # coef = min(1, max / (‖g‖ + 1e-6)), in the gradients' dtype, every gradient multiplied.
            coefficient = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)  # []
            for p in parameters:
                fsdp.local(p.grad).mul_(coefficient)  # each rank scales its own shards
        for group in optimizer.param_groups:
            group["lr"] = settings["learning_rate"]  # the trainer's schedule decides each step's rate
        optimizer.step()
        session.optimizer_step += 1
    except BaseException:
        if sharded:  # a pass that raised on every rank may have left FSDP mid-iteration
            fsdp.reset(session.root)
        raise
    finally:
        optimizer.zero_grad(set_to_none=True)
        causal_lm.eval()
    (main_sums, main_tokens, main_padded), *rest = results
    replay = None
    if rest:
        replay_sums, replay_tokens, replay_padded = rest[0]
        replay = {"micro_batches": replay_sums, "sequences": parts[1].batch.size}
        main_tokens += replay_tokens
        main_padded += replay_padded
    return {
        "micro_batches": main_sums,
        "grad_norm": norm,
        "tokens": main_tokens,
        "padded_tokens": main_padded,
        "seconds": time.perf_counter() - started,
        "optimizer_step": session.optimizer_step,
        "replay": replay,
    }
