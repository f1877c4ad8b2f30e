# The engine's training step on a GPU box, with nothing but Python, torch, transformers and peft (no Node,
# no network, no model files): Qwen2.5-0.5B, 1.5B and 7B built from their published configs with random
# weights in bf16, one LoRA adapter (r 16, all seven projections) trained by the engine's own ops exactly
# as the trainer drives them (edgerl_torch.server.Server, in this process: the protocol's framing aside),
# GRPO (CISPO, token-mean) on 8 sequences × 1,024 tokens, the last half trained, gradient checkpointing
# and the chunked log-softmax on. Prints step time, trained tokens/s, achieved TFLOP/s and peak memory per
# shape beside the same run's bf16 matmul ceiling; writes the figures as JSON (--out, or $OUT/bench-gpu.json).
# About 4 minutes on one H200. `--shapes tiny --device cpu` is the smoke test the engine's suite runs.
#
#   PYTHONPATH=torch-engine python -m edgerl_torch.bench_gpu [--shapes 0.5b,1.5b,7b] [--out FILE]
from __future__ import annotations

import argparse
import json
import os
import platform
import time

# Qwen2.5-{0.5B,1.5B,7B}-Instruct's config.json on the Hugging Face Hub (the fields that shape the model;
# the same values as edgerl's presets, model/real-presets.ts). `tiny` is edgerl's tiny preset.
SHAPES = {
    "tiny": dict(hidden_size=64, intermediate_size=176, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=576, tie_word_embeddings=True),
    "0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                 num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True),
    "1.5b": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                 num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True),
    "7b": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
               num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False),
}
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def matmul_ceiling(torch, device, dtype, n: int) -> float:
    """TFLOP/s of an n×n matmul in `dtype`: what the device's libraries reach on the step's main work."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    sync(torch, device)
    repeats = 20 if device.type == "cuda" else 3
    started = time.perf_counter()
    for _ in range(repeats):
        a @ b
    sync(torch, device)
    return 2 * n**3 * repeats / (time.perf_counter() - started) / 1e12


def sync(torch, device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def step_flops(config: dict, sequences: int, positions: int, trained: int) -> float:
    """Matmul FLOPs of one step (2 per multiply-add): the layers forward, recomputed once (checkpointing)
    and backward to their inputs (3 passes over every position); the output head forward and backward on
    trained positions only. LoRA's own matmuls are left out (under 1 % at r 16)."""
    d, f, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    head_dim = d // config["num_attention_heads"]
    kv = config["num_key_value_heads"] * head_dim
    per_layer = d * d + 2 * d * kv + d * d + 3 * d * f  # q, k, v, o, gate, up, down
    attention = 4 * positions * d  # scores and values, keys S = T
    layer_flops = layers * (2 * per_layer + attention) * sequences * positions
    return 3 * layer_flops + 2 * 2 * d * config["vocab_size"] * trained


def bench_shape(name: str, args, torch, device, dtype) -> dict:
    from transformers import AutoModelForCausalLM, Qwen2Config

    from .args import Args
    from .model import prepare_model
    from .server import Server
    from .world import SingleProcess

    shape = SHAPES[name]
    config = Qwen2Config(**shape, max_position_embeddings=32768, rope_theta=1_000_000.0, rms_norm_eps=1e-6)
    started = time.perf_counter()
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa")
    server = Server(SingleProcess())
    loaded = prepare_model(model, device, dtype, True, 1024, f"random:{name}", started)
    server.session.set_model(loaded)
    build_seconds = time.perf_counter() - started
    server.adapter_create(
        Args({"lora": {"r": args.rank, "alpha": 2 * args.rank, "targets": TARGETS}, "seed": 0}, "adapter-create"),
        {},
        None,
    )
    server.optimizer_reset(
        Args({"learning_rate": 1e-5, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": 0.1}, "optimizer-reset"),
        {},
        None,
    )

    b, t = args.sequences, args.positions
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(0, shape["vocab_size"], (b * t,), generator=generator, dtype=torch.int32)
    targets = torch.zeros(b, t - 1, dtype=torch.uint8)
    targets[:, t // 2 - 1 :] = 1
    tensors = views(
        {
            "lengths": torch.full((b,), t, dtype=torch.int32),
            "ids": ids,
            "target_mask": targets.reshape(-1),
            "old_logprobs": torch.full((b * (t - 1),), -12.0),
            "on_policy": torch.zeros(b * (t - 1), dtype=torch.uint8),
            "advantages": torch.tensor([1.0 if i % 2 == 0 else -1.0 for i in range(b)]),
        }
    )
    per_micro_batch = max(1, args.micro_batch_tokens // t)
    step_args = {
        "objective": {
            "kind": "grpo",
            "loss": {"loss_kind": "cispo", "clip": {"low": 0.2, "high": 0.28}, "aggregation": "token-mean",
                     "beta": 0.0, "correction": None},
        },
        "micro_batches": [list(range(i, min(b, i + per_micro_batch))) for i in range(0, b, per_micro_batch)],
        "normaliser": {"tokens": int(targets.sum()), "sequences": b},
        "max_grad_norm": 1.0,
        "learning_rate": 1e-5,
        "pad_token_id": 0,
        "replay": None,
    }
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    times = []
    for _ in range(args.steps + 1):  # the first is warm-up (kernel choice, allocator)
        sync(torch, device)
        began = time.perf_counter()
        server.step(Args(step_args, "step"), tensors, None)
        sync(torch, device)
        times.append(time.perf_counter() - began)
    seconds = min(times[1:]) if len(times) > 1 else times[0]
    trained = int(targets.sum())
    memory = server.memory(Args({}, "memory"), {}, None)[0]
    result = {
        "shape": name,
        "parameters": loaded.info["parameters"],
        "build_seconds": build_seconds,
        "seconds_per_step": seconds,
        "first_step_seconds": times[0],
        "trained_tokens_per_second": trained / seconds,
        "tokens_per_second": b * t / seconds,
        "achieved_tflops": step_flops(shape, b, t, trained) / seconds / 1e12,
        "peak_memory_bytes": memory.get("peak_bytes"),
        "micro_batches": len(step_args["micro_batches"]),
    }
    del server, loaded, model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


def views(tensors: dict) -> dict:
    """The tensors as a request's payload carries them (the protocol's own encoding and views)."""
    import io

    from .protocol import encode_frame, read_frame, tensor_views
    from .tensors import from_torch

    frame = read_frame(io.BytesIO(encode_frame({}, {k: from_torch(v) for k, v in tensors.items()})))
    return tensor_views(frame.header, frame.payload)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description="the torch engine's training step on a GPU")
    parser.add_argument("--shapes", default="0.5b,1.5b,7b")
    parser.add_argument("--sequences", type=int, default=8)
    parser.add_argument("--positions", type=int, default=1024)
    parser.add_argument("--micro-batch-tokens", type=int, default=4096)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)

    import peft
    import torch
    import transformers

    device = torch.device(args.device)
    dtype = getattr(torch, args.dtype)
    report = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu",
        "batch": f"{args.sequences} x {args.positions} tokens, last half trained, LoRA r {args.rank} on all projections",
        "matmul_ceiling_tflops": matmul_ceiling(torch, device, dtype, 8192 if device.type == "cuda" else 512),
        "shapes": [],
    }
    print(f"{report['device']}: torch {report['torch']}, transformers {report['transformers']}, peft {report['peft']}")
    print(f"{args.dtype} matmul ceiling: {report['matmul_ceiling_tflops']:.1f} TFLOP/s; batch {report['batch']}")
    for name in args.shapes.split(","):
        result = bench_shape(name, args, torch, device, dtype)
        report["shapes"].append(result)
        peak = result["peak_memory_bytes"] or 0
        print(
            f"  {name:>5}: {result['seconds_per_step']:.2f} s/step (first {result['first_step_seconds']:.2f}), "
            f"{result['trained_tokens_per_second']:.0f} trained tok/s, {result['achieved_tflops']:.1f} TFLOP/s "
            f"({100 * result['achieved_tflops'] / report['matmul_ceiling_tflops']:.0f} % of the ceiling), "
            f"peak {peak / 2**30:.1f} GiB, built in {result['build_seconds']:.0f} s",
            flush=True,
        )
    out = args.out or (os.path.join(os.environ["OUT"], "bench-gpu.json") if os.environ.get("OUT") else None)
    if out:
        with open(out, "w") as handle:
            json.dump(report, handle, indent=2)
    return report


if __name__ == "__main__":
    main()
