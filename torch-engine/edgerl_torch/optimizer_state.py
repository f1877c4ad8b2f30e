# The engine-neutral optimiser state file, format `edgerl-adamw/2` (docs/torch-engine.md "Optimiser
# state"): `m.<PEFT key>` and `v.<PEFT key>` float32 in PEFT's layout, the step in the metadata; read
# into and written from torch AdamW's state (exp_avg, exp_avg_sq, step); under FSDP the whole moments are
# gathered from the ranks' shards, and split back over them. Leaves out the adapter file.
from __future__ import annotations

import os

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from . import fsdp
from .errors import bad_request

FORMAT = "edgerl-adamw/2"
FILE = "optimizer.safetensors"


def optimizer_moments(session) -> dict[str, torch.Tensor]:
    """The file's tensors, whole, on the CPU. Under FSDP every rank calls it (each moment is gathered
    from the ranks' shards, in the same order on all)."""
    optimizer = session.require_optimizer()
    tensors = {}
    for key, parameter in session.trainable():
        state = optimizer.state.get(parameter, {})
        # Before the first step torch has no state yet: the moments are zeros (adamw.ts starts there too).
        m = fsdp.full(state.get("exp_avg", torch.zeros_like(parameter)))
        v = fsdp.full(state.get("exp_avg_sq", torch.zeros_like(parameter)))
        tensors[f"m.{key}"] = m.detach().to("cpu", torch.float32).contiguous()
        tensors[f"v.{key}"] = v.detach().to("cpu", torch.float32).contiguous()
    return tensors


def save_optimizer_state(session, directory: str, tensors: dict[str, torch.Tensor] | None = None) -> str:
    """Writes `tensors` (optimizer_moments' result; gathered here when None) as the state file."""
    if tensors is None:
        tensors = optimizer_moments(session)
    os.makedirs(directory, exist_ok=True)
    save_file(tensors, os.path.join(directory, FILE), metadata={"format": FORMAT, "step": str(session.optimizer_step)})
    return FILE


def load_optimizer_state(session, path: str) -> dict:
    optimizer = session.require_optimizer()
    if not os.path.isfile(path):
        raise bad_request(f"optimizer-load.path: {path} does not exist")
    with safe_open(path, framework="pt") as file:
        metadata = file.metadata() or {}
        if metadata.get("format") != FORMAT:
            raise bad_request(f'optimizer-load: {path} has format {metadata.get("format")!r}, expected "{FORMAT}"')
        try:
            step = int(metadata.get("step", ""))
        except ValueError:
            raise bad_request(f"optimizer-load: {path} has step {metadata.get('step')!r}, not an integer") from None
        if step < 0:
            raise bad_request(f"optimizer-load: {path} has step {step}, must be >= 0")
        parameters = session.trainable()
        expected = {f"{which}.{key}" for key, _ in parameters for which in ("m", "v")}
        present = set(file.keys())
        missing, unexpected = sorted(expected - present), sorted(present - expected)
        if missing or unexpected:
            # Usually train_a differs from the run that wrote it (LoRA-FA keeps no A moments).
            raise bad_request(
                f"optimizer-load: {path} does not match the optimiser's tensors: "
                f"missing {missing[:4]} ({len(missing)}), unexpected {unexpected[:4]} ({len(unexpected)})"
            )
        moments = {}
        for key, parameter in parameters:
            for which in ("m", "v"):
                tensor = file.get_tensor(f"{which}.{key}")
                if tuple(tensor.shape) != tuple(parameter.shape):
                    raise bad_request(
                        f"optimizer-load: {which}.{key} is {list(tensor.shape)} in {path}, "
                        f"but the adapter tensor is {list(parameter.shape)}"
                    )
                moments[(key, which)] = tensor.to(device=parameter.device, dtype=parameter.dtype)
    # Everything checked before anything changes: a bad file leaves the optimiser as it was. Every rank
    # read the same file and found the same problems; under FSDP each now keeps its shards of rank 0's.
    for key, parameter in parameters:
        optimizer.state[parameter] = {
            # torch keeps `step` as a float32 CPU tensor (unless capturable/fused): its own layout.
            "step": torch.tensor(float(step), dtype=torch.float32),
            "exp_avg": fsdp.shard_like(moments[(key, "m")], parameter),
            "exp_avg_sq": fsdp.shard_like(moments[(key, "v")], parameter),
        }
    session.optimizer_step = step
    return {"step": step}
