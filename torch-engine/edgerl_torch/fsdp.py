# `--sharding fsdp`: the base model's weights and the LoRA adapter sharded across the ranks with FSDP2
# (torch.distributed.fsdp.fully_shard): each decoder layer one unit, then a root over the rest (embeddings,
# final norm, LM head), gradients reduce-scattered as a SUM; full tensors gathered for files and sharded
# back from them. Leaves out when the model is sharded (session.py) and what the passes compute (step.py,
# logprobs.py, predict.py: they run every pass through the root, `Session.forward`).
from __future__ import annotations

import torch
import torch.distributed as dist

from .errors import EngineError, bad_request

# FSDPModule.set_force_sum_reduction_for_comms and set_gradient_divide_factor came with pytorch#155915
# (June 2025, torch 2.8); `fully_shard` itself has been public since 2.6. The engine checks for the method.
MINIMUM_TORCH = "2.8"


def _api():
    try:
        from torch.distributed.fsdp import FSDPModule, fully_shard
    except ImportError:
        FSDPModule = fully_shard = None
    if FSDPModule is None or not hasattr(FSDPModule, "set_force_sum_reduction_for_comms"):
        raise EngineError(
            "engine-requirements",
            "--sharding fsdp needs FSDP2's set_force_sum_reduction_for_comms (torch "
            f"{MINIMUM_TORCH} or newer), which torch {torch.__version__} lacks. To fix it, upgrade torch "
            "(npm run setup:torch installs the pinned version) or run with --sharding none.",
        )
    return fully_shard, FSDPModule


def check_available() -> None:
    """engine-requirements when this torch cannot shard the way the engine does."""
    _api()


class ForwardRoot(torch.nn.Module):
    """The root FSDP unit: holds the PEFT model, and its forward runs whatever pass it is given. The
    engine never calls the transformers model's own forward (that would build the batch's full [B·T, V]
    logits): it calls the decoder, then the LM head a chunk at a time (logprobs.py). FSDP's root hooks
    (all-gather the root's shards: embeddings, norm, LM head; lazy initialisation; the end-of-backward
    callback) run around a module's forward, so every pass is `root(lambda: ...)`."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, run):
        return run()


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The modules transformers keeps whole when it splits a model across devices (`_no_split_modules`:
    Qwen2DecoderLayer, LlamaDecoderLayer, ...): the natural FSDP units, one all-gather each."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    names = set(getattr(base, "_no_split_modules", None) or ())
    return [module for module in model.modules() if type(module).__name__ in names]


def shard(model: torch.nn.Module, device: torch.device, world_size: int) -> ForwardRoot:
    """fully_shard on every decoder layer, then on a ForwardRoot over `model` (bottom-up, as FSDP2
    requires): each parameter (base weight and LoRA matrix alike) is split along dim 0 across the ranks
    as a DTensor, and moved to `device` a unit at a time, so while sharding no rank's device holds more
    than its shards plus one whole unit. In place: `model`'s modules now hold the shards."""
    fully_shard, FSDPModule = _api()
    from torch.distributed.device_mesh import init_device_mesh

    layers = decoder_layers(model)
    if not layers:
        raise bad_request(
            f"{type(model).__name__}: no decoder layers to shard (transformers' _no_split_modules is empty); "
            "use --sharding none"
        )
    mesh = init_device_mesh(device.type, (world_size,))
    for layer in layers:
        fully_shard(layer, mesh=mesh)
    root = fully_shard(ForwardRoot(model), mesh=mesh)
    for module in root.modules():
        if isinstance(module, FSDPModule):
            # A SUM, not FSDP's default mean: every micro-batch loss is already divided by the whole
            # step's normaliser (losses.py), so the ranks' gradients add up to one process's. Divide
            # factor 1 alone would make a PREMUL_SUM(1) reduction, which gloo lacks; forcing sum
            # reductions gives a plain SUM and no scaling (_fsdp_collectives._get_gradient_divide_factors).
            module.set_gradient_divide_factor(1.0)
            module.set_force_sum_reduction_for_comms(True)
    return root


def reset(root: ForwardRoot) -> None:
    """After a pass raised on every rank: drop FSDP's per-iteration state (reshard, forget the pending
    backward), so the next pass starts clean. Local; no collective."""
    if hasattr(root, "reset_iter_state"):  # recent torch (2.13 has it); before it, reshard every unit
        root.reset_iter_state()
    else:
        for module in root.modules():
            if hasattr(module, "reshard"):
                module.reshard()


def _dtensor():
    from torch.distributed.tensor import DTensor

    return DTensor


def local(tensor: torch.Tensor) -> torch.Tensor:
    """This rank's shard of a sharded tensor (a view: writing to it writes the DTensor); any other tensor as it is."""
    return tensor.to_local() if isinstance(tensor, _dtensor()) else tensor


def full(tensor: torch.Tensor) -> torch.Tensor:
    """The whole tensor of a shard, gathered from every rank (a collective: every rank calls it, in the
    same order); any other tensor as it is."""
    return tensor.full_tensor() if isinstance(tensor, _dtensor()) else tensor


def shard_like(whole: torch.Tensor, parameter: torch.Tensor) -> torch.Tensor:
    """`whole` (the parameter's full shape) laid out as `parameter` is: for a sharded parameter, rank 0's
    values split over the ranks as FSDP splits the parameter (a collective); otherwise `whole` itself."""
    if not isinstance(parameter, _dtensor()):
        return whole
    from torch.distributed.tensor import distribute_tensor

    return distribute_tensor(whole.contiguous(), parameter.device_mesh, parameter.placements)


def grad_norm(parameters: list[torch.nn.Parameter]) -> torch.Tensor:
    """‖g‖₂ of sharded gradients: each rank's sum of squares over its shards, summed over the ranks (one
    all-reduce), square-rooted; the unsharded norm up to float rounding. Every rank gets the same value,
    so a non-finite norm fails the step on all of them."""
    local_norms = torch.stack([torch.linalg.vector_norm(local(p.grad)) for p in parameters])  # [P]
    squares = (local_norms.double() ** 2).sum()  # []
    dist.all_reduce(squares, op=dist.ReduceOp.SUM)
    return squares.sqrt().to(local_norms.dtype)  # []
