# What the engine holds between requests: the model, its one adapter, the optimiser, and the ranks it
# runs on; the checks that answer engine-state when a request comes too early; under --sharding fsdp,
# when the model is sharded and how every pass reaches it. Leaves out the ops.
from __future__ import annotations

import contextlib

from .errors import state_error


class Session:
    def __init__(self, world, sharding: str = "none") -> None:
        self.world = world
        self.sharding = sharding  # "none" (every rank holds the whole model) or "fsdp"
        self.loaded = None  # model.LoadedModel
        self.peft = None  # peft.PeftModel wrapping loaded.causal_lm, or None
        self.root = None  # fsdp.ForwardRoot over `peft` once sharded (--sharding fsdp), or None
        self.reload = None  # --sharding fsdp: loads the base model again, as load-model did
        self.optimizer = None  # torch.optim.AdamW over the adapter's trainable matrices
        self.optimizer_step = 0  # AdamW's t after the last update
        self.train_a = True  # false: LoRA-FA, every lora_A frozen (optimizer-reset's train_a)

    def require_model(self):
        if self.loaded is None:
            raise state_error("no model is loaded: send load-model first")
        return self.loaded

    def require_adapter(self):
        self.require_model()
        if self.peft is None:
            raise state_error("there is no adapter: send adapter-create or adapter-load first")
        return self.peft

    def require_optimizer(self):
        self.require_adapter()
        if self.optimizer is None:
            raise state_error("there is no optimiser for this adapter: send optimizer-reset first")
        return self.optimizer

    def set_model(self, loaded, reload=None) -> None:
        self.drop_model()
        self.loaded = loaded
        self.reload = reload

    def drop_model(self) -> None:
        self._drop_weights()
        self.reload = None

    def _drop_weights(self) -> None:
        self.loaded = None
        self.peft = None
        self.root = None
        self.drop_optimizer()

    def drop_adapter(self) -> None:
        """Removes the adapter's layers from the model (PEFT's unload, unmerged) and its optimiser. Under
        FSDP, once sharded, PEFT cannot take the adapter out of the sharded layers: the whole model goes
        and the base is read again from its directory (unsharded, in host memory, as load-model left it);
        also on a rank whose sharding failed, so that every rank ends with the same base."""
        if self.reload is not None and (self.root is not None or self.loaded is None):
            self._drop_weights()
            _free_memory()  # the old shards go before the new weights come
            try:
                self.loaded = self.reload()
            except BaseException:
                self.reload = None  # no model now; the error says why
                raise
        elif self.peft is not None:
            self.loaded.causal_lm = self.peft.unload()
            self.peft = None
        self.drop_optimizer()

    def set_adapter(self, peft) -> None:
        """A new adapter replaces the old one and its optimiser; every rank starts from rank 0's values.
        Under FSDP this is when the model is sharded: PEFT has just put its LoRA layers in, and FSDP2 fixes
        each unit's parameters when it shards it, so the adapter must exist first (fsdp.py)."""
        self.peft = peft
        self.drop_optimizer()
        self.train_a = True
        self.apply_trainable()
        # PEFT's new dropout modules start in training mode; only `step` trains (and sets it itself).
        peft.eval()
        self.world.broadcast_parameters([p for name, p in peft.named_parameters() if ".lora_" in name])
        if self.sharding == "fsdp":
            from . import fsdp

            try:
                self.root = fsdp.shard(peft, self.loaded.device, self.world.size)
            except BaseException:
                self._drop_weights()  # part-sharded: nothing to keep; drop_adapter loads the base again
                raise

    def forward(self, run):
        """Runs one pass (`run()` calls the model and returns its tensors). Under FSDP it runs inside the
        root unit, whose hooks gather each unit's shards; every rank must make the same passes, in order."""
        if self.sharding != "fsdp":
            return run()
        if self.root is None:
            raise state_error(
                "under --sharding fsdp the model is sharded together with its adapter: "
                "send adapter-create or adapter-load first"
            )
        import torch  # not at the top: server.py imports this module before it knows torch is there

        out = self.root(run)
        if not torch.is_grad_enabled():
            # FSDP keeps the root's gathered weights (embeddings, LM head) after its forward for the
            # backward; a pass without one frees them now (local, no collective).
            self.root.reshard()
        return out

    def turns(self, plan: list) -> list:
        """This rank's micro-batches of `plan`, dealt round-robin, as (index, members). Under FSDP one
        entry per round, None where this rank has no micro-batch: it must still run a pass, because every
        pass is a collective (fsdp.py) and a rank that skipped one would leave the others waiting."""
        if self.root is None:
            return self.world.share(plan)
        size, rank = self.world.size, self.world.rank
        rounds = -(-len(plan) // size)
        return [(i, plan[i]) if (i := r * size + rank) < len(plan) else None for r in range(rounds)]

    def drop_optimizer(self) -> None:
        self.optimizer = None
        self.optimizer_step = 0

    def trainable(self) -> list:
        """(PEFT key, parameter) of the matrices the optimiser updates: all, or every B under LoRA-FA."""
        from .adapter import adapter_tensors

        return [(key, p) for key, p in adapter_tensors(self.require_adapter()) if self.train_a or ".lora_B." in key]

    def apply_trainable(self) -> None:
        """requires_grad on exactly the trainable matrices (base weights stay frozen from load-model)."""
        from .adapter import adapter_tensors

        chosen = {id(p) for _, p in self.trainable()}
        for _, parameter in adapter_tensors(self.peft):
            parameter.requires_grad_(id(parameter) in chosen)

    def adapter_context(self, use_adapter: bool):
        """The adapter on (as it is) or off (PEFT's disable_adapter) for the forward passes inside."""
        if use_adapter:
            self.require_adapter()
            return contextlib.nullcontext()
        return self._adapter_off() if self.peft is not None else contextlib.nullcontext()

    @contextlib.contextmanager
    def _adapter_off(self):
        # PEFT's disable_adapter, on exit, marks every matrix of the active adapter trainable again
        # (BaseTuner.enable_adapters → set_adapter), which would undo LoRA-FA's frozen A.
        try:
            with self.peft.disable_adapter():
                yield
        finally:
            self.apply_trainable()


def _free_memory() -> None:
    import gc

    import torch

    gc.collect()  # FSDP's states and hooks hold the old modules in reference cycles
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
