# Op `optimizer-reset`: a fresh torch.optim.AdamW over the adapter's trainable matrices, and LoRA-FA's
# frozen A. Leaves out the state file (optimizer_state.py) and the update itself (step.py).
#
# torch.optim.AdamW is trainer/grpo/adamw.ts's update exactly (Loshchilov & Hutter, arXiv:1711.05101,
# Alg. 2; torch's docs give the same algorithm): θ ← θ(1 − lr·λ) first, then
# m ← β1·m + (1 − β1)·g, v ← β2·v + (1 − β2)·g², θ ← θ − lr·(m / (1 − β1^t)) / (√(v / (1 − β2^t)) + ε).
# tests/test_step.py checks one update against this arithmetic by hand.
from __future__ import annotations

import torch

from .args import Args


def reset_optimizer(session, args: Args) -> dict:
    session.require_adapter()
    settings = {
        "lr": args.number("learning_rate", minimum=0),
        # Required, no defaults here: the trainer's config holds them (torch's own AdamW default
        # weight_decay 0.01 differs from edgerl's, so a silent default would change training).
        "betas": (args.number("beta1", minimum=0, below=1), args.number("beta2", minimum=0, below=1)),
        "eps": args.number("eps", positive=True),
        "weight_decay": args.number("weight_decay", minimum=0),
    }
    # LoRA-FA (Zhang et al. 2023, arXiv:2308.03303): A stays at its initial value and gets no gradient;
    # only B is trained and only B is in the optimiser (and in its state file).
    session.train_a = args.boolean("train_a", True)
    session.apply_trainable()
    parameters = session.trainable()
    session.optimizer = torch.optim.AdamW([p for _, p in parameters], **settings)
    session.optimizer_step = 0
    return {"step": 0, "tensors": len(parameters)}
