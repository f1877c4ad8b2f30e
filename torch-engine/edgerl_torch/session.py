# What the engine holds between requests: the model, its one adapter, the optimiser, and the ranks it
# runs on; the checks that answer engine-state when a request comes too early. Leaves out the ops.
from __future__ import annotations

import contextlib

from .errors import state_error


class Session:
    def __init__(self, world) -> None:
        self.world = world
        self.loaded = None  # model.LoadedModel
        self.peft = None  # peft.PeftModel wrapping loaded.causal_lm, or None
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

    def set_model(self, loaded) -> None:
        self.drop_model()
        self.loaded = loaded

    def drop_model(self) -> None:
        self.loaded = None
        self.peft = None
        self.drop_optimizer()

    def drop_adapter(self) -> None:
        """Removes the adapter's layers from the model (PEFT's unload, unmerged) and its optimiser."""
        if self.peft is not None:
            self.loaded.causal_lm = self.peft.unload()
            self.peft = None
        self.drop_optimizer()

    def set_adapter(self, peft) -> None:
        """A new adapter replaces the old one and its optimiser; every rank starts from rank 0's values."""
        self.peft = peft
        self.drop_optimizer()
        self.train_a = True
        self.apply_trainable()
        # PEFT's new dropout modules start in training mode; only `step` trains (and sets it itself).
        peft.eval()
        self.world.broadcast_parameters([p for name, p in peft.named_parameters() if ".lora_" in name])

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
