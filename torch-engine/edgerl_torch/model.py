# Op `load-model`: a Hugging Face causal LM directory loaded with transformers, every base weight
# frozen, on the chosen device and dtype (or in host memory, for --sharding fsdp to shard onto the device
# later). Leaves out adapters (adapter.py) and sharding (fsdp.py).
from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass

import torch
import transformers
from transformers import AutoModelForCausalLM

from .args import Args
from .errors import bad_request
from .logprobs import check_output_head
from .requirements import parse_version


@dataclass
class LoadedModel:
    causal_lm: torch.nn.Module  # the transformers model; PEFT injects its LoRA layers into it in place
    device: torch.device
    dtype: torch.dtype
    logprob_chunk_tokens: int
    model_dir: str
    vocab_size: int
    info: dict


_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}

# Rows of the output projection per logprob chunk: 1024 rows × a 152k vocabulary (Qwen2.5) is 0.6 GB of
# float32 logits, a size any training GPU holds beside the model; the tiny models of the tests use less.
DEFAULT_LOGPROB_CHUNK_TOKENS = 1024


def resolve_device(name: str, local_rank: int) -> torch.device:
    """auto → cuda when available, else cpu; each rank of several uses cuda:LOCAL_RANK."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise bad_request("load-model.device is cuda, but torch sees no CUDA device")
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def load_model(args: Args, local_rank: int, on_host: bool = False) -> LoadedModel:
    """`on_host` (--sharding fsdp): the weights stay in host memory, unsharded, until the adapter exists
    and fsdp.py shards them onto `device` a layer at a time; `device` is where the passes will run."""
    started = time.perf_counter()
    model_dir = args.string("model_dir")
    device = resolve_device(args.string("device", "auto", ("auto", "cpu", "cuda")), local_rank)
    dtype_name = args.string("dtype", "auto", ("auto", "float32", "bfloat16"))
    # bf16 on GPUs (what Qwen/Llama checkpoints are trained in); float32 on CPUs, where bf16 matmuls are
    # slow on most cores and the models are small.
    dtype = (
        _DTYPES[dtype_name] if dtype_name != "auto" else (torch.bfloat16 if device.type == "cuda" else torch.float32)
    )
    checkpointing = args.boolean("gradient_checkpointing", False)
    chunk = args.integer("logprob_chunk_tokens", DEFAULT_LOGPROB_CHUNK_TOKENS, minimum=1)
    attention = args.string("attention", "sdpa", ("sdpa", "eager"))
    seed = args.integer("seed", 0)

    torch.manual_seed(seed)
    # transformers 4.56 renamed from_pretrained's `torch_dtype` to `dtype`; 4.45–4.55 know only the old name.
    version = parse_version(transformers.__version__)
    options = {"dtype" if version >= (4, 56) else "torch_dtype": dtype, "attn_implementation": attention}
    accelerate = version >= (5,) or importlib.util.find_spec("accelerate") is not None
    if device.type == "cuda" and not on_host and accelerate:
        # Straight onto the GPU, without a whole copy of the weights in host memory first (device_map
        # needs accelerate before transformers 5).
        options["device_map"] = str(device)
    try:
        model = AutoModelForCausalLM.from_pretrained(model_dir, **options)
    except (OSError, ValueError) as error:
        raise bad_request(f"load-model: cannot load {model_dir} as a causal LM: {error}") from error
    if not on_host:
        return prepare_model(model, device, dtype, checkpointing, chunk, model_dir, started)
    loaded = prepare_model(model, torch.device("cpu"), dtype, checkpointing, chunk, model_dir, started)
    loaded.device = device
    loaded.info["device"] = str(device)
    return loaded


def prepare_model(
    model: torch.nn.Module,
    device: torch.device,
    dtype: torch.dtype,
    checkpointing: bool,
    chunk: int,
    model_dir: str,
    started: float,
) -> LoadedModel:
    """A loaded (or, for bench_gpu.py, freshly built) causal LM made ready to train adapters on: on its
    device, in eval mode with every base weight frozen, no KV cache, checkpointing as asked."""
    model.to(device)  # a no-op when device_map already placed it
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    # No KV cache while training or scoring: each request is one full forward pass.
    model.config.use_cache = False
    if checkpointing:
        # Non-reentrant checkpointing (torch's recommendation, torch.utils.checkpoint docs) works with
        # frozen inputs, so PEFT's enable_input_require_grads hook is not needed for gradients to flow.
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    check_output_head(model, device)

    config = model.config
    info = {
        "architecture": (getattr(config, "architectures", None) or [type(model).__name__])[0],
        "vocab_size": int(config.vocab_size),
        "hidden_size": int(config.hidden_size),
        "num_layers": int(config.num_hidden_layers),
        "max_position_embeddings": int(getattr(config, "max_position_embeddings", 0) or 0),
        # model.parameters() yields a tied embedding/output matrix once.
        "parameters": sum(p.numel() for p in model.parameters()),
        "dtype": str(dtype).removeprefix("torch."),
        "device": str(device),
        "seconds": time.perf_counter() - started,
    }
    return LoadedModel(model, device, dtype, chunk, model_dir, int(config.vocab_size), info)
