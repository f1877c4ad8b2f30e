# Op `predict`: at given (row, position) pairs, the most likely next token and, when `tokens` are
# given, the log-probability of each; under FSDP every rank makes a pass each round. Leaves out sampling
# and decoding loops (the trainer's evals).
#
# Legend: K = queries, Q = queries in one micro-batch, H = hidden size, V = vocabulary.
from __future__ import annotations

import torch

from .args import Args
from .batch import idle_batch, pad
from .errors import bad_request
from .logprobs import default_plan, final_hidden, output_logits
from .tensors import flat_batch, tensor_arg


def predict(session, args: Args, tensors: dict) -> tuple[dict, dict]:
    loaded = session.require_model()
    use_adapter = args.boolean("adapter")
    batch = flat_batch(tensors, loaded.vocab_size)
    rows = tensor_arg(tensors, "rows", "int32").to(torch.int64)  # [K]
    k = rows.shape[0]
    positions = tensor_arg(tensors, "positions", "int32", count=k).to(torch.int64)  # [K]
    tokens = tensor_arg(tensors, "tokens", "int32", count=k, optional=True)  # [K] or None
    for q in range(k):
        row, position = int(rows[q]), int(positions[q])
        if not 0 <= row < batch.size:
            raise bad_request(f'tensor "rows": entry {q} is {row}, not a sequence index in [0, {batch.size})')
        if not 0 <= position < batch.lengths[row]:
            raise bad_request(
                f'tensor "positions": entry {q} is {position}, outside sequence {row} (length {batch.lengths[row]})'
            )
        if tokens is not None and not 0 <= int(tokens[q]) < loaded.vocab_size:
            raise bad_request(f'tensor "tokens": entry {q} is {int(tokens[q])}, outside the vocabulary')
    plan = (
        args.index_lists("micro_batches", batch.size)
        if args.values.get("micro_batches")
        else default_plan(batch.size, session.world.size)
    )
    local, error = [], None
    try:
        with torch.no_grad(), session.adapter_context(use_adapter):
            for turn in session.turns(plan):
                members = [] if turn is None else turn[1]
                where = {member: row for row, member in enumerate(members)}
                queries = [q for q in range(k) if int(rows[q]) in where]
                if not queries and session.root is None:
                    continue
                # Under FSDP a pass even without queries (every pass is a collective): an idle one.
                padded = (pad(batch, members, pad_token_id=0) if queries else idle_batch(0)).to(loaded.device)
                local.extend(
                    session.forward(lambda: _answer(loaded, padded, where, queries, rows, positions, tokens))
                )
    except Exception as caught:  # every rank must reach the gather, or learn that one will not
        error = caught
    session.world.raise_first(error)
    return _reply(session, local, k, tokens)


def _answer(loaded, padded, where: dict, queries: list[int], rows, positions, tokens) -> list[tuple]:
    """(query, argmax, log-prob or None) for `queries`, whose rows are all in the padded micro-batch."""
    hidden = final_hidden(loaded.causal_lm, padded)  # [B, T, H]
    if not queries:
        return []
    at_rows = torch.tensor([where[int(rows[q])] for q in queries], device=loaded.device)  # [Q]
    at_positions = positions[queries].to(loaded.device)  # [Q]
    chosen = hidden[at_rows, at_positions]  # [Q, H]
    answers = []
    for start in range(0, len(queries), loaded.logprob_chunk_tokens):
        part = queries[start : start + loaded.logprob_chunk_tokens]
        logits = output_logits(loaded.causal_lm, chosen[start : start + len(part)])  # [c, V]
        best = logits.argmax(dim=-1).cpu()  # [c]
        logprobs = None
        if tokens is not None:
            wanted = tokens[part].to(torch.int64).to(loaded.device)  # [c]
            # log-softmax at the token, in float32 (logprobs.py's rule).
            chosen_logits = logits.gather(1, wanted[:, None]).squeeze(1)  # [c, V] → [c]
            logprobs = (chosen_logits - torch.logsumexp(logits, -1)).cpu()  # [c]
        for i, q in enumerate(part):
            answers.append((q, int(best[i]), None if logprobs is None else float(logprobs[i])))
    return answers


def _reply(session, local: list[tuple], k: int, tokens) -> tuple[dict, dict]:
    """Every rank's answers, gathered on rank 0 in query order."""
    gathered = session.world.gather(local)
    if gathered is None:
        return {}, {}
    argmax = torch.zeros(k, dtype=torch.int32)  # [K]
    out_logprobs = torch.zeros(k, dtype=torch.float32)  # [K]
    for q, best, logprob in gathered:
        argmax[q] = best
        if logprob is not None:
            out_logprobs[q] = logprob
    return {}, {"argmax": argmax, **({"logprobs": out_logprobs} if tokens is not None else {})}
