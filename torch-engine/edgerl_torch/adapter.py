# The one LoRA adapter (Hu et al. 2021, arXiv:2106.09685) on the loaded model, through PEFT: ops
# `adapter-create`, `adapter-load` and `save` (whole tensors, gathered from the ranks' shards under FSDP),
# and the adapter's tensors under their PEFT names.
# Leaves out several named adapters, DoRA and other PEFT methods (model/lora.ts leaves them out too).
from __future__ import annotations

import json
import os

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from peft.utils import SAFETENSORS_WEIGHTS_NAME
from safetensors import safe_open

from . import fsdp
from .args import Args
from .errors import bad_request

ADAPTER = "default"  # PEFT's adapter name; save_pretrained strips it from the keys it writes
CONFIG_FILE = "adapter_config.json"


def peft_key(parameter_name: str) -> str:
    """The name PEFT saves a parameter under: `...q_proj.lora_A.default.weight` → `...q_proj.lora_A.weight`
    (peft.utils.save_and_load.get_peft_model_state_dict removes the adapter name)."""
    return parameter_name.replace(f".{ADAPTER}.", ".")


def adapter_tensors(peft: PeftModel) -> list[tuple[str, torch.nn.Parameter]]:
    """Every LoRA matrix, frozen ones included, as (PEFT key, parameter), in module order (layer by layer,
    A before B: model/lora.ts's order too)."""
    return [(peft_key(name), p) for name, p in peft.named_parameters() if ".lora_A." in name or ".lora_B." in name]


def _unwrap(session) -> torch.nn.Module:
    """The bare transformers model: the current adapter's layers removed (one adapter at a time)."""
    session.drop_adapter()  # under FSDP a fresh base (session.py): read `loaded` after it
    return session.require_model().causal_lm


def _orthogonal_a(peft: PeftModel) -> None:
    """init_a "orthogonal" (model/lora.ts `LoraInitA`): A's rows (or columns when r > in) orthonormal,
    times 1/scaling, so scaling·B·A moves W by exactly B's update rotated (Saxe et al. 2013,
    arXiv:1312.6120). torch.nn.init.orthogonal_ on A [r, in] gives orthonormal rows when r ≤ in and
    orthonormal columns otherwise, drawn from the Haar measure (QR of a Gaussian, signs fixed)."""
    for module in peft.modules():
        if hasattr(module, "lora_A") and ADAPTER in getattr(module, "lora_A", {}):
            weight = module.lora_A[ADAPTER].weight  # [r, in]
            with torch.no_grad():
                values = torch.empty(weight.shape, dtype=torch.float32)
                torch.nn.init.orthogonal_(values)
                weight.copy_(values / module.scaling[ADAPTER])


def lora_settings(config: LoraConfig) -> dict:
    targets = config.target_modules
    return {
        "r": int(config.r),
        "alpha": config.lora_alpha,
        "dropout": float(config.lora_dropout),
        "targets": sorted(targets) if isinstance(targets, (set, list, tuple)) else targets,
        "use_rslora": bool(config.use_rslora),
    }


def create_adapter(session, args: Args) -> dict:
    lora = args.object("lora")
    r = lora.integer("r", minimum=1)
    alpha = lora.number("alpha", positive=True)
    alpha = int(alpha) if alpha.is_integer() else alpha  # written back as 8, not 8.0, like model/lora.ts
    dropout = lora.number("dropout", 0.0, minimum=0, below=1)
    targets = lora.string_list("targets")
    use_rslora = lora.boolean("use_rslora", False)
    init_a = lora.string("init_a", "kaiming-uniform", ("kaiming-uniform", "orthogonal"))
    seed = args.integer("seed", 0)
    base = _unwrap(session)
    config = LoraConfig(
        r=r,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=targets,
        use_rslora=use_rslora,
        bias="none",
        task_type="CAUSAL_LM",
    )
    # PEFT draws A from torch's global generator (kaiming_uniform_, a = √5): the seed makes it repeatable,
    # and the same on every rank of several.
    torch.manual_seed(seed)
    try:
        peft = get_peft_model(base, config)
    except ValueError as error:  # no module matches any target
        raise bad_request(f"adapter-create.lora: {error}") from error
    # PEFT adapts whatever matches and is silent about a target that matches nothing beside others that do.
    adapted = [name for name, module in peft.named_modules() if hasattr(module, "lora_A")]
    unmatched = [t for t in targets if not any(name == t or name.endswith(f".{t}") for name in adapted)]
    if unmatched:
        session.peft = peft
        session.drop_adapter()
        raise bad_request(f"adapter-create.lora.targets: this model has no module named {', '.join(unmatched)}")
    if init_a == "orthogonal":
        _orthogonal_a(peft)
    session.set_adapter(peft)
    return {"trainable_parameters": sum(p.numel() for _, p in adapter_tensors(peft))}


def load_adapter(session, args: Args) -> dict:
    directory = args.string("dir")
    config_path = os.path.join(directory, CONFIG_FILE)
    if not os.path.isfile(config_path):
        raise bad_request(f"adapter-load.dir: {config_path} does not exist")
    if not os.path.isfile(os.path.join(directory, SAFETENSORS_WEIGHTS_NAME)):
        raise bad_request(f"adapter-load.dir: {directory} has no {SAFETENSORS_WEIGHTS_NAME}")
    with open(config_path, encoding="utf-8") as file:
        raw = json.load(file)
    if raw.get("peft_type") != "LORA":
        raise bad_request(f'adapter-load: {config_path} has peft_type {raw.get("peft_type")!r}; only "LORA" loads')
    if raw.get("use_dora"):
        raise bad_request(f"adapter-load: {config_path} is a DoRA adapter (use_dora), which the engine does not train")
    base = _unwrap(session)
    try:
        # is_trainable=True: the adapter's matrices require grad (the file's inference_mode is ignored).
        peft = PeftModel.from_pretrained(base, directory, is_trainable=True)
    except (ValueError, KeyError, RuntimeError) as error:
        # A shape mismatch fails after PEFT has wrapped the projections; the base is then not clean.
        if any(hasattr(module, "base_layer") for module in base.modules()):
            session.drop_model()
            raise bad_request(
                f"adapter-load: {directory} does not fit this model ({error}); load the model again"
            ) from error
        raise bad_request(f"adapter-load: {directory} does not fit this model: {error}") from error
    # PEFT loads with strict=False and only warns about missing keys: a file naming other modules would
    # leave the adapter at its initial values. Every tensor must be there, and nothing else.
    with safe_open(os.path.join(directory, SAFETENSORS_WEIGHTS_NAME), framework="pt") as file:
        present = set(file.keys())
    expected = {key for key, _ in adapter_tensors(peft)}
    missing, unexpected = sorted(expected - present), sorted(present - expected)
    if missing or unexpected:
        session.peft = peft
        session.drop_adapter()
        raise bad_request(
            f"adapter-load: {directory} does not fit this model: missing {missing[:4]} ({len(missing)}), "
            f"unexpected {unexpected[:4]} ({len(unexpected)})"
        )
    session.set_adapter(peft)
    return {"lora": lora_settings(peft.peft_config[ADAPTER])}


def adapter_state(session, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Every LoRA matrix under its parameter name, whole, cast to `dtype`. Under FSDP every rank calls
    it (each matrix is gathered from the ranks' shards, in the same order on all)."""
    peft = session.require_adapter()
    return {name: fsdp.full(p.detach()).to(dtype) for name, p in peft.named_parameters() if ".lora_" in name}


def save_adapter(
    session,
    directory: str,
    dtype: torch.dtype,
    base_model_name_or_path: str | None,
    state: dict[str, torch.Tensor] | None = None,
) -> list[str]:
    """PEFT's own save_pretrained (adapter_config.json + adapter_model.safetensors, keys without the
    adapter name) of `state` (adapter_state's; gathered here when None). base_model_name_or_path None
    keeps PEFT's default."""
    peft = session.require_adapter()
    if state is None:
        state = adapter_state(session, dtype)
    config = peft.peft_config[ADAPTER]
    previous = config.base_model_name_or_path
    if base_model_name_or_path is not None:
        config.base_model_name_or_path = base_model_name_or_path
    try:
        # save_embedding_layers=False: the adapter has no embedding layers, and "auto" would look the
        # base model up on the Hub to compare vocabulary sizes.
        peft.save_pretrained(directory, state_dict=state, save_embedding_layers=False)
    finally:
        config.base_model_name_or_path = previous
    # PEFT also writes a model card (README.md) beside the two files vLLM and PEFT read.
    written = [CONFIG_FILE, SAFETENSORS_WEIGHTS_NAME, "README.md"]
    return [name for name in written if os.path.isfile(os.path.join(directory, name))]
