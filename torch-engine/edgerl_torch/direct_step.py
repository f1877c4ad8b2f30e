# The baseline `npm run bench:train -- --engine torch` measures the engine against: the same GRPO step
# written directly in PyTorch, as a user would without edgerl (no protocol, no micro-batch plan, whole-
# batch logits): AutoModelForCausalLM + PEFT LoRA, log-softmax gathered at the targets, CISPO with
# token-mean, backward, global-norm clip, AdamW. Prints one JSON line. Leaves out everything else.
#
#   python -m edgerl_torch.direct_step --model DIR --sequences 8 --positions 128 --rank 8 --steps 5
from __future__ import annotations

import argparse
import json
import resource
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--sequences", type=int, default=8)
    parser.add_argument("--positions", type=int, default=128)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--micro-batch-sequences", type=int, default=4)
    parser.add_argument("--gradient-checkpointing", action="store_true")
    args = parser.parse_args()

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.requires_grad_(False)
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    model = get_peft_model(
        model, LoraConfig(r=args.rank, lora_alpha=2 * args.rank, target_modules=targets, task_type="CAUSAL_LM")
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=1e-5, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
    vocab = model.config.vocab_size

    b, t = args.sequences, args.positions
    ids = torch.randint(0, vocab, (b, t))  # [B, T]
    mask = torch.zeros(b, t - 1)  # [B, T−1]: the last half is trained
    mask[:, t // 2 - 1 :] = 1
    old = torch.full((b, t - 1), -3.0)
    advantages = torch.tensor([1.0 if i % 2 == 0 else -1.0 for i in range(b)])  # [B]
    tokens = mask.sum()

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        for start in range(0, b, args.micro_batch_sequences):
            rows = slice(start, start + args.micro_batch_sequences)
            logits = model(input_ids=ids[rows]).logits[:, :-1].float()  # [b, T−1, V]
            logprobs = logits.log_softmax(-1).gather(-1, ids[rows, 1:, None]).squeeze(-1)  # [b, T−1]
            # CISPO (MiniMax-M1, arXiv:2506.13585): −sg(clip(ρ, 1 − 0.2, 1 + 0.28))·A·ℓ, token-mean.
            weight = (logprobs.detach() - old[rows]).exp().clamp(0.8, 1.28)
            loss = -(weight * advantages[rows, None] * logprobs * mask[rows]).sum() / tokens
            loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()

    step()  # warm-up
    started = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = (time.perf_counter() - started) / args.steps

    a = torch.randn(1024, 1024)
    c = torch.randn(1024, 1024)
    a @ c
    began = time.perf_counter()
    for _ in range(10):
        a @ c
    matmul = (time.perf_counter() - began) / 10
    print(
        json.dumps(
            {
                "ms_per_step": seconds * 1000,
                "trained_tokens_per_second": float(tokens) / seconds,
                "matmul_gflops": 2 * 1024**3 / matmul / 1e9,
                "threads": torch.get_num_threads(),
                # ru_maxrss is KiB on Linux: the whole process's peak, model and all.
                "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            }
        )
    )


if __name__ == "__main__":
    main()
