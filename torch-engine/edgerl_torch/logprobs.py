# Per-token log-probabilities out[t] = log p(ids[t + 1] | ids[≤ t]) without ever holding a batch's
# [B·T, V] logits: the decoder runs to its final hidden states, and the output projection and the
# log-softmax run only at the wanted positions, a chunk of rows at a time (each chunk checkpointed while
# training, so backward recomputes its logits instead of keeping them). Also op `logprobs` (under FSDP
# every rank makes a pass each round).
# Leaves out the loss (losses.py) and padding (batch.py).
#
# Legend: B = sequences, T = padded length, H = hidden size, V = vocabulary, K = wanted positions,
# c = rows of one chunk (at most logprob_chunk_tokens), N = sequences of a request.
from __future__ import annotations

import torch
from torch.utils.checkpoint import checkpoint

from .args import Args
from .batch import Padded, idle_batch, pad
from .errors import bad_request
from .tensors import flat_batch


def output_logits(causal_lm: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """[c, H] → [c, V] float32: the LM head, then Gemma 2's final soft-cap when the config has one
    (transformers' Gemma2ForCausalLM.forward); check_output_head rejects models that do anything else."""
    logits = causal_lm.get_output_embeddings()(hidden).float()  # [c, V]
    cap = getattr(causal_lm.config, "final_logit_softcapping", None)
    if cap:
        logits = torch.tanh(logits / cap) * cap  # [c, V]
    return logits


def final_hidden(causal_lm: torch.nn.Module, padded: Padded) -> torch.Tensor:
    """[B, T, H] the decoder's last hidden states (after its final norm). Calling the decoder of the
    transformers model keeps PEFT's LoRA layers in play: PEFT replaces the projections in place."""
    decoder = causal_lm.get_decoder()
    out = decoder(
        input_ids=padded.ids,
        attention_mask=padded.attention_mask,
        position_ids=padded.position_ids,
        use_cache=False,
    )
    return out[0]  # [B, T, H]


def _chunk_logprobs(causal_lm: torch.nn.Module, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """[c, H], [c] → [c]: log-softmax at the target, ℓ = z_y − logsumexp(z), in float32 even for a bf16
    model (bf16's 8-bit mantissa would round a 150k-way logsumexp by about 0.01 nats)."""
    logits = output_logits(causal_lm, hidden)  # [c, V]
    return logits.gather(1, targets[:, None]).squeeze(1) - torch.logsumexp(logits, dim=-1)  # [c]


def target_logprobs(
    causal_lm: torch.nn.Module, hidden: torch.Tensor, padded: Padded, chunk_tokens: int
) -> torch.Tensor:
    """[B, T − 1] float32: the log-prob of token t + 1 where padded.target_mask is set, 0 elsewhere."""
    b, t, _ = hidden.shape
    chosen = hidden[:, :-1][padded.target_mask]  # [B, T − 1, H] → [K, H]
    targets = padded.ids[:, 1:][padded.target_mask]  # [B, T − 1] → [K]
    training = torch.is_grad_enabled() and chosen.requires_grad
    parts = []
    for start in range(0, chosen.shape[0], chunk_tokens):
        rows = chosen[start : start + chunk_tokens]  # [c, H]
        wanted = targets[start : start + chunk_tokens]  # [c]
        if training:
            # Non-reentrant checkpoint (torch.utils.checkpoint docs): only `rows` is saved; backward
            # recomputes the chunk's [c, V] logits, so at most one chunk's logits exist at a time.
            parts.append(checkpoint(_chunk_logprobs, causal_lm, rows, wanted, use_reentrant=False))
        else:
            parts.append(_chunk_logprobs(causal_lm, rows, wanted))
    values = torch.cat(parts) if parts else hidden.new_zeros(0, dtype=torch.float32)  # [K]
    out = torch.zeros((b, t - 1), dtype=torch.float32, device=hidden.device)  # [B, T − 1]
    return out.masked_scatter(padded.target_mask, values)  # [B, T − 1]


def check_output_head(causal_lm: torch.nn.Module, device: torch.device) -> None:
    """Refuses a model whose logits are not output_logits(final hidden state) (a logit scale, say):
    compares both on four tokens. Costs one tiny forward pass at load."""
    ids = torch.arange(4, device=device)[None] % causal_lm.config.vocab_size  # [1, 4]
    positions = torch.arange(4, device=device)[None]  # [1, 4]
    padded = Padded(ids, torch.ones_like(ids), positions, ids[:, 1:] >= 0, 4, 4)  # every target: [1, 3]
    with torch.no_grad():
        expected = causal_lm(input_ids=ids, attention_mask=padded.attention_mask).logits[0].float()  # [4, V]
        ours = output_logits(causal_lm, final_hidden(causal_lm, padded)[0])  # [4, V]
    scale = float(expected.abs().max()) + 1e-6
    difference = float((ours - expected).abs().max())
    # Same matmul on the same hidden states: only a different head could differ by more than rounding.
    if difference > 1e-3 * scale:
        raise bad_request(
            f"{type(causal_lm).__name__}: its logits are not the LM head of the final hidden state "
            f"(largest difference {difference:.3g}); the engine cannot compute its log-probs by chunks"
        )


def default_plan(count: int, world_size: int) -> list[list[int]]:
    """Without `micro_batches`: all sequences at once, or one strided share per rank."""
    if world_size == 1:
        return [list(range(count))]
    return [list(range(rank, count, world_size)) for rank in range(world_size) if rank < count]


def sequence_logprobs(session, args: Args, tensors: dict) -> tuple[dict, dict]:
    """Op `logprobs`: every target of every sequence, flat [Σ(T − 1)], under the adapter or the base."""
    loaded = session.require_model()
    use_adapter = args.boolean("adapter")
    batch = flat_batch(tensors, loaded.vocab_size)
    plan = (
        args.index_lists("micro_batches", batch.size)
        if args.values.get("micro_batches")
        else default_plan(batch.size, session.world.size)
    )
    causal_lm, chunk = loaded.causal_lm, loaded.logprob_chunk_tokens
    local, error = [], None
    try:
        with torch.no_grad(), session.adapter_context(use_adapter):
            for turn in session.turns(plan):
                if turn is None:  # FSDP: no micro-batch for this rank this round, but a pass all the same
                    idle = idle_batch(0).to(loaded.device)
                    session.forward(lambda: final_hidden(causal_lm, idle))
                    continue
                _, members = turn
                # Padding ids never matter here: right padding sits after every real token, out of the
                # causal view of the targets, and is never a target itself.
                padded = pad(batch, members, pad_token_id=0).to(loaded.device)
                out = session.forward(
                    lambda: target_logprobs(causal_lm, final_hidden(causal_lm, padded), padded, chunk)
                ).cpu()  # [B, T − 1]
                local.extend((member, out[row, : batch.lengths[member] - 1]) for row, member in enumerate(members))
    except Exception as caught:  # every rank must reach the gather, or learn that one will not
        error = caught
    session.world.raise_first(error)
    gathered = session.world.gather(local)
    if gathered is None:
        return {}, {}
    flat = torch.zeros(sum(batch.lengths) - batch.size, dtype=torch.float32)  # [Σ(T − 1)]
    for member, values in gathered:
        start = batch.target_starts[member]
        flat[start : start + len(values)] = values
    return {}, {"logprobs": flat}
