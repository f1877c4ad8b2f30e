# What one micro-batch is trained to minimise (GRPO: PPO-clip or CISPO, token- or sequence-mean, k3 KL,
# TIS rollout correction; SFT), as pure torch functions: tensors in, tensors out, no I/O, no sync to host.
# A copy of trainer/grpo/{objective-loss,grpo-loss,losses,aggregate,kl,rollout-correction}.ts, which
# stay the definition; leaves out the forward pass, the backward call and reading the sums back.
#
# Why a copy pinned by vectors, not one definition handed to the engine: the loss has to run inside the
# same autograd graph as the model, on the GPU, so it must be torch code; shipping it as data would need
# an interpreter on both sides. The TypeScript (which the tfjs engine runs and the docs describe) is the
# one authority, and test/fixtures/grpo/loss-vectors.json, generated from it and read by both test suites
# (trainer/grpo/loss-vectors.test.ts, torch-engine/tests/test_losses.py), catches drift either way.
#
# Legend: B = sequences in the micro-batch, T = predicted positions per sequence, m = mask.
# Off the mask any value may sit in logprobs, old_logprobs and ref_logprobs (NaN too): every use goes
# through `torch.where`, never a multiply by m, since NaN·0 = NaN would leak into values and gradients.
from __future__ import annotations

import math
from typing import Callable

import torch
from torch import Tensor

# |log π_prox − log π_sampler| is clamped to this before exp (verl's rollout correction bound).
LOG_RATIO_BOUND = 20.0


def _check_clip(clip: dict) -> tuple[float, float]:
    low, high = clip.get("low"), clip.get("high")
    if not (isinstance(low, (int, float)) and 0 <= low <= 1):
        raise ValueError(f"clip.low must be in [0, 1] (lower ratio bound 1 − low >= 0), got {low}")
    if not (isinstance(high, (int, float)) and high >= 0 and math.isfinite(high)):
        raise ValueError(f"clip.high must be a finite number >= 0, got {high}")
    return float(low), float(high)


def check_cap(cap: object) -> float:
    if not (isinstance(cap, (int, float)) and 1 <= cap < math.exp(LOG_RATIO_BOUND)):
        raise ValueError(f"the importance-weight cap must be at least 1 and below e^20, got {cap}")
    return float(cap)


def _check_shapes(logprobs: Tensor, advantages: Tensor, **same: Tensor) -> None:
    if logprobs.dim() != 2:
        raise ValueError(f"logprobs must be [B, T], got shape {list(logprobs.shape)}")
    batch, tokens = logprobs.shape
    for name, tensor in same.items():
        if tensor.shape != logprobs.shape:
            raise ValueError(f"{name} must match logprobs [{batch}, {tokens}], got {list(tensor.shape)}")
    if advantages.dim() == 1 and advantages.shape[0] != batch:
        raise ValueError(f"advantages [B] must have B = {batch}, got {list(advantages.shape)}")
    if advantages.dim() != 1 and advantages.shape != logprobs.shape:
        raise ValueError(f"advantages must be [B] or [B, T] = [{batch}, {tokens}], got {list(advantages.shape)}")


def _prepare(logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, mask: Tensor):
    """The masked log-probs, [B, T] advantages and ratio every token loss starts from (losses.ts `prepare`)."""
    _check_shapes(logprobs, advantages, old_logprobs=old_logprobs, mask=mask)
    on = mask > 0  # [B, T] bool
    mask_f = on.to(logprobs.dtype)  # [B, T]
    zero = logprobs.new_zeros(())
    masked_logprobs = torch.where(on, logprobs, zero)  # [B, T]
    delta = torch.where(on, logprobs - old_logprobs, zero)  # [B, T]
    per_token = advantages.reshape(-1, 1) if advantages.dim() == 1 else advantages  # [B, 1] | [B, T]
    advantages = torch.where(on, per_token.expand_as(mask_f), zero)  # [B, T]
    return masked_logprobs, mask_f, advantages, torch.exp(delta)  # ratio: [B, T]


def ppo_clip_loss(logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, mask: Tensor, clip: dict) -> dict:
    """PPO clipped surrogate with DAPO's separate bounds (arXiv:2503.14476; GRPO in DeepSeekMath,
    arXiv:2402.03300 eq. 3): L_t = −min(ρ_t·A_t, clip(ρ_t, 1 − low, 1 + high)·A_t), ρ_t = exp(ℓ_t − o_t).
    Clipped: ρ < 1 − low with A < 0, or ρ > 1 + high with A > 0 (where the clipped branch is the min)."""
    low, high = _check_clip(clip)
    _, mask_f, advantages, ratio = _prepare(logprobs, old_logprobs, advantages, mask)
    unclipped = ratio * advantages  # [B, T]
    clipped = torch.clamp(ratio, 1 - low, 1 + high) * advantages  # [B, T]
    # tf.minimum's gradient form: a tie goes to the first argument (torch.minimum splits it in half).
    surrogate = torch.where(unclipped <= clipped, unclipped, clipped)  # [B, T]
    clipped_low = (ratio < 1 - low) & (advantages < 0)  # [B, T]
    clipped_high = (ratio > 1 + high) & (advantages > 0)  # [B, T]
    return {
        "loss": -surrogate * mask_f,
        "ratio": ratio * mask_f,
        "clipped_low": clipped_low.to(mask_f.dtype) * mask_f,
        "clipped_high": clipped_high.to(mask_f.dtype) * mask_f,
    }


def cispo_loss(logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, mask: Tensor, clip: dict) -> dict:
    """CISPO (MiniMax-M1, arXiv:2506.13585 §3.1): clip the importance weight, not the update, and stop its
    gradient: L_t = −sg(clip(ρ_t, 1 − low, 1 + high))·A_t·ℓ_t. Clipped: the weight was, whatever A's sign."""
    low, high = _check_clip(clip)
    masked_logprobs, mask_f, advantages, ratio = _prepare(logprobs, old_logprobs, advantages, mask)
    weight = torch.clamp(ratio, 1 - low, 1 + high).detach()  # [B, T]
    return {
        "loss": -(weight * advantages * masked_logprobs) * mask_f,
        "ratio": ratio * mask_f,
        "clipped_low": (ratio < 1 - low).to(mask_f.dtype) * mask_f,
        "clipped_high": (ratio > 1 + high).to(mask_f.dtype) * mask_f,
    }


TOKEN_LOSSES: dict[str, Callable[..., dict]] = {"ppo-clip": ppo_clip_loss, "cispo": cispo_loss}


def _check_normaliser(normaliser: dict | None) -> None:
    if normaliser is None:
        return
    tokens, sequences = normaliser.get("tokens"), normaliser.get("sequences")
    if not (isinstance(tokens, (int, float)) and tokens > 0 and isinstance(sequences, (int, float)) and sequences > 0):
        raise ValueError(
            f"step normaliser needs tokens > 0 and sequences > 0, got tokens {tokens}, sequences {sequences}"
        )


def token_mean(values: Tensor, mask: Tensor, normaliser: dict | None = None) -> Tensor:
    """Σ L·m / N_step, N_step = trained tokens in the whole optimiser step (DAPO §3.3 token-level loss;
    TRL `dapo`, verl's default). Without a normaliser the micro-batch is the step (max(Σm, 1))."""
    _check_normaliser(normaliser)
    total = (values * mask).sum()  # []
    if normaliser is None:
        return total / torch.clamp(mask.sum(), min=1)
    return total / normaliser["tokens"]


def sequence_mean(values: Tensor, mask: Tensor, normaliser: dict | None = None) -> Tensor:
    """Σ_b (Σ_t L·m / max(Σ_t m, 1)) / S_step, S_step = sequences with a trained token in the step
    (DeepSeekMath GRPO, arXiv:2402.03300 eq. 3). A sequence with no trained token adds 0."""
    _check_normaliser(normaliser)
    lengths = mask.sum(dim=1)  # [B]
    per_sequence = (values * mask).sum(dim=1) / torch.clamp(lengths, min=1)  # [B]
    if normaliser is None:
        return per_sequence.sum() / torch.clamp((lengths > 0).to(mask.dtype).sum(), min=1)
    return per_sequence.sum() / normaliser["sequences"]


AGGREGATIONS: dict[str, Callable[..., Tensor]] = {"token-mean": token_mean, "sequence-mean": sequence_mean}


def kl_k3(logprobs: Tensor, ref_logprobs: Tensor, mask: Tensor) -> Tensor:
    """[B, T] k3 = exp(ℓ_ref − ℓ) − (ℓ_ref − ℓ) − 1 ≥ 0 on the mask, 0 off it (Schulman, "Approximating KL
    Divergence", 2020; added to GRPO's loss in DeepSeekMath eq. 4). Gradients flow through logprobs only."""
    if ref_logprobs.shape != logprobs.shape or mask.shape != logprobs.shape:
        raise ValueError(
            f"ref_logprobs and mask must match logprobs {list(logprobs.shape)}, "
            f"got {list(ref_logprobs.shape)} and {list(mask.shape)}"
        )
    on = mask > 0  # [B, T]
    log_ratio = torch.where(on, ref_logprobs - logprobs, logprobs.new_zeros(()))  # [B, T]
    return (torch.exp(log_ratio) - log_ratio - 1) * on.to(logprobs.dtype)  # [B, T]


def truncated_importance_weights(proximal: Tensor, sampler: Tensor, mask: Tensor, cap: float) -> dict:
    """TIS (Yao et al. 2025, fengyao.notion.site/off-policy-rl; verl rollout correction, token level,
    `truncate`): w_t = sg(min(exp(clamp(ℓ_prox,t − o_t, ±20)), cap)) on the mask, 0 off it; with the
    untruncated ratio and where the cap bound (ratio > cap), for the step's statistics."""
    cap = check_cap(cap)
    on = mask > 0  # [B, T]
    mask_f = on.to(proximal.dtype)  # [B, T]
    difference = proximal.detach() - sampler.detach()  # [B, T]
    delta = torch.where(on, torch.clamp(difference, -LOG_RATIO_BOUND, LOG_RATIO_BOUND), proximal.new_zeros(()))
    ratio = torch.exp(delta) * mask_f  # [B, T]
    return {
        "weight": torch.clamp(ratio, max=cap) * mask_f,
        "ratio": ratio,
        "truncated": (ratio > cap).to(mask_f.dtype) * mask_f,
    }


def check_grpo_options(options: dict, has_ref: bool) -> None:
    """The checks grpo-loss.ts makes before computing, with its messages (the protocol's snake_case names)."""
    beta = options.get("beta")
    if not (isinstance(beta, (int, float)) and beta >= 0):
        raise ValueError(f"beta must be >= 0, got {beta}")
    if beta > 0 and not has_ref:
        raise ValueError(f"beta is {beta} but no ref_logprobs were given: compute them with the adapter off")
    if options.get("loss_kind") not in TOKEN_LOSSES:
        raise ValueError(f'unknown loss_kind "{options.get("loss_kind")}": one of {", ".join(TOKEN_LOSSES)}')
    if options.get("aggregation") not in AGGREGATIONS:
        raise ValueError(f'unknown aggregation "{options.get("aggregation")}": one of {", ".join(AGGREGATIONS)}')
    _check_clip(options.get("clip") or {})
    correction = options.get("correction")
    if correction is not None:
        if correction.get("kind") != "tis":
            raise ValueError(f'unknown correction kind "{correction.get("kind")}": "tis" or null')
        check_cap(correction.get("cap"))


def grpo_loss(
    options: dict,
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    mask: Tensor,
    normaliser: dict | None = None,
    ref_logprobs: Tensor | None = None,
    proximal_logprobs: Tensor | None = None,
) -> dict[str, Tensor]:
    """The token loss (times the TIS weight with a correction, its ratio then against the proximal
    log-probs), aggregated, plus beta·aggregated k3: loss = policy + beta·kl (DeepSeekMath eq. 3; the
    aggregation is linear), and the masked sums of grpo-loss.ts (snake_case)."""
    check_grpo_options(options, ref_logprobs is not None)
    correction = options.get("correction")
    if correction is not None and proximal_logprobs is None:
        raise ValueError("a rollout correction needs proximal_logprobs (the step start adapter log-probs, detached)")
    loss_fn = TOKEN_LOSSES[options["loss_kind"]]
    aggregate = AGGREGATIONS[options["aggregation"]]
    sums: dict[str, Tensor] = {}
    if correction is None:
        token = loss_fn(logprobs, old_logprobs, advantages, mask, options["clip"])
    else:
        weights = truncated_importance_weights(proximal_logprobs, old_logprobs, mask, correction["cap"])
        token = loss_fn(logprobs, proximal_logprobs, advantages, mask, options["clip"])
        token["loss"] = token["loss"] * weights["weight"]  # [B, T]
        sums.update(
            is_weight_sum=weights["weight"].sum(),
            is_weight_max=weights["weight"].max(),
            is_truncated=weights["truncated"].sum(),
            is_ratio_sum=weights["ratio"].sum(),
            is_ratio_max=weights["ratio"].max(),
        )
    policy_loss = aggregate(token["loss"], mask, normaliser)  # []
    mask_f = (mask > 0).to(logprobs.dtype)  # [B, T]
    sums.update(
        policy_loss=policy_loss,
        tokens=mask_f.sum(),
        sequences=(mask_f.sum(dim=1) > 0).to(mask_f.dtype).sum(),  # [B] → []
        ratio_sum=token["ratio"].sum(),
        clipped_low=token["clipped_low"].sum(),
        clipped_high=token["clipped_high"].sum(),
    )
    if ref_logprobs is None:
        return {"loss": policy_loss, **sums}
    k3 = kl_k3(logprobs, ref_logprobs, mask)  # [B, T]
    kl = aggregate(k3, mask, normaliser)  # []
    return {"loss": policy_loss + kl * options["beta"], "kl": kl, "kl_sum": k3.sum(), **sums}


def sft_loss(logprobs: Tensor, mask: Tensor, weighted_mask: Tensor, normaliser: dict | None = None) -> dict:
    """L = −Σ w·m·ℓ / N_step: token-mean over the step, as TRL's SFTTrainer averages over label tokens
    (w = 1 unless the sequence weighs its tokens). `where` keeps off-mask garbage out, as in GRPO (the
    TypeScript multiplies by the mask here; the two agree whenever off-mask log-probs are finite)."""
    if weighted_mask.shape != logprobs.shape or mask.shape != logprobs.shape:
        raise ValueError(
            f"mask and weighted_mask must match logprobs {list(logprobs.shape)}, "
            f"got {list(mask.shape)} and {list(weighted_mask.shape)}"
        )
    negative = torch.where(mask > 0, -logprobs, logprobs.new_zeros(()))  # [B, T]
    loss = token_mean(negative, weighted_mask, normaliser)  # []
    tokens = mask.sum()  # []
    zero = tokens.new_zeros(())
    return {
        "loss": loss,
        "policy_loss": loss.detach(),
        "tokens": tokens,
        "sequences": (mask.sum(dim=1) > 0).to(mask.dtype).sum(),  # [B] → []
        "ratio_sum": tokens.clone(),  # the ratio is 1 by definition
        "clipped_low": zero,
        "clipped_high": zero.clone(),
    }


def objective_loss(objective: dict, logprobs: Tensor, batch: dict, normaliser: dict) -> dict[str, Tensor]:
    """One micro-batch's loss and sums for a protocol objective (docs/torch-engine.md, op `step`), as
    trainer/grpo/objective-loss.ts computes them. `logprobs` [B, T] carries the gradient; the batch holds
    mask, weighted_mask, old_logprobs (0 where unknown), on_policy (bool), advantages [B] and ref_logprobs
    (or None); `normaliser` is the whole step's {"tokens", "sequences"}. Computes in float32 (float64 if
    logprobs are float64)."""
    dtype = torch.float64 if logprobs.dtype == torch.float64 else torch.float32
    logprobs = logprobs.to(dtype)  # [B, T]

    def tensor(name: str) -> Tensor:
        return batch[name].to(device=logprobs.device, dtype=dtype)

    _check_normaliser(normaliser)
    kind = objective.get("kind")
    if kind == "sft":
        return sft_loss(logprobs, tensor("mask"), tensor("weighted_mask"), normaliser)
    if kind != "grpo":
        raise ValueError(f'unknown objective kind "{kind}": "grpo" or "sft"')
    options = objective.get("loss") or {}
    ref = batch.get("ref_logprobs")
    check_grpo_options(options, ref is not None)
    # Trained tokens with no sampling log-prob take the current one, detached: ratio ≡ 1 (on-policy).
    current = logprobs.detach()  # [B, T]
    on_policy = batch["on_policy"].to(device=logprobs.device, dtype=torch.bool)  # [B, T]
    old = torch.where(on_policy, current, tensor("old_logprobs"))  # [B, T]
    return grpo_loss(
        options,
        logprobs,
        old,
        tensor("advantages"),
        tensor("mask"),
        normaliser,
        ref_logprobs=None if ref is None else tensor("ref_logprobs"),
        # One optimiser step per batch: the proximal policy is this forward's adapter, so its log-probs
        # are these, detached (rollout-correction.ts); no second forward pass.
        proximal_logprobs=current if options.get("correction") is not None else None,
    )
