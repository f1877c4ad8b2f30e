# Op `step` (edgerl_torch/step.py) in this process: one step over several micro-batches plus a replay
# equals an independent full-batch computation (full logits, one backward, torch's clip_grad_norm_ and
# AdamW); a step moves every adapter tensor and no base weight; LoRA-FA; AdamW by hand; failures.
import math
import unittest

import torch

from edgerl_torch.args import Args
from edgerl_torch.errors import EngineError
from edgerl_torch.losses import objective_loss
from tests.support import flat, in_process, largest_difference, randomise_b, tiny_model_dir, views

LORA = {"r": 4, "alpha": 8, "targets": ["q_proj", "v_proj", "up_proj"]}
SEQUENCES = [[1, 5, 9, 200, 7, 3, 44], [4, 8, 15, 16, 23], [300, 2, 17], [9, 10, 11, 12, 13, 14, 15, 16]]
# Entry t of a sequence describes token t + 1: the first tokens are the prompt (not trained).
TARGET_MASK = [[0, 0, 1, 1, 1, 1], [0, 1, 1, 1], [0, 1], [0, 0, 0, 1, 1, 1, 1]]
REPLAY = [[7, 8, 9, 10, 11], [20, 21, 22]]
REPLAY_MASK = [[0, 1, 1, 1], [1, 1]]
GRPO = {
    "kind": "grpo",
    "loss": {
        "loss_kind": "ppo-clip",
        "clip": {"low": 0.2, "high": 0.28},
        "aggregation": "token-mean",
        "beta": 0.05,
        "correction": {"kind": "tis", "cap": 2.0},
    },
}
OPTIMIZER = {"learning_rate": 0.05, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8, "weight_decay": 0.1}


def step_tensors(old_logprobs: list[list[float]]) -> dict:
    """The step's tensors: targets without a sampling log-prob are NaN and flagged on-policy."""
    n = sum(len(s) - 1 for s in SEQUENCES)
    old = torch.tensor([x for row in old_logprobs for x in row], dtype=torch.float32)
    mask = torch.tensor([x for row in TARGET_MASK for x in row], dtype=torch.uint8)
    assert old.shape == (n,) and mask.shape == (n,)
    replay = flat(REPLAY)
    return {
        **flat(SEQUENCES),
        "target_mask": mask,
        "old_logprobs": old,
        "on_policy": (torch.isnan(old) & (mask == 1)).to(torch.uint8),
        "advantages": torch.tensor([1.0, -1.0, 0.5, -0.5]),
        "replay_lengths": replay["lengths"],
        "replay_ids": replay["ids"],
        "replay_target_mask": torch.tensor([x for row in REPLAY_MASK for x in row], dtype=torch.uint8),
        "replay_loss_weights": torch.tensor([1.0, 2.0, 1.0, 0.5, 1.0, 1.0]),
    }


def normaliser(masks) -> dict:
    return {"tokens": sum(map(sum, masks)), "sequences": sum(1 for m in masks if sum(m) > 0)}


def step_args(max_grad_norm, objective=GRPO, replay=True) -> dict:
    return {
        "objective": objective,
        "micro_batches": [[3, 0], [1], [2]],
        "normaliser": normaliser(TARGET_MASK),
        "max_grad_norm": max_grad_norm,
        "learning_rate": 0.02,
        "pad_token_id": 547,
        "replay": {"weight": 0.5, "micro_batches": [[1], [0]], "normaliser": normaliser(REPLAY_MASK)}
        if replay
        else None,
    }


def full_logprobs(peft, sequences) -> torch.Tensor:
    """[B, T − 1] from each sequence's full logits, zero-padded: no chunks, no padding in the forward."""
    width = max(len(s) for s in sequences) - 1
    rows = []
    for s in sequences:
        ids = torch.tensor([s])  # [1, T]
        values = peft(input_ids=ids).logits[0, :-1].float().log_softmax(-1).gather(1, ids[0, 1:, None]).squeeze(1)
        rows.append(torch.nn.functional.pad(values, (0, width - len(values))))  # [T − 1] → [width]
    return torch.stack(rows)  # [B, T − 1]


def padded(rows, width, fill=0.0) -> torch.Tensor:
    return torch.tensor([list(r) + [fill] * (width - len(r)) for r in rows], dtype=torch.float32)


class StepTest(unittest.TestCase):
    def setUp(self):
        self.server = in_process(tiny_model_dir(), lora=LORA)
        self.peft = self.server.session.peft
        self.adapter = [(n, p) for n, p in self.peft.named_parameters() if ".lora_" in n]

    def reset(self, **overrides):
        return self.server.optimizer_reset(
            Args({**OPTIMIZER, "train_a": True, **overrides}, "optimizer-reset"), {}, None
        )[0]

    def step(self, args, tensors):
        events = []
        result, _ = self.server.step(Args(args, "step"), views(tensors), lambda e, d: events.append((e, d)))
        return result, events

    def sampled_logprobs(self) -> list[list[float]]:
        """Old log-probs a little off the current ones (so ratios differ from 1 and some clip), NaN on
        one trained token of each sequence (on-policy)."""
        generator = torch.Generator().manual_seed(3)
        with torch.no_grad():
            current = full_logprobs(self.peft, SEQUENCES)
        out = []
        for row, mask in enumerate(TARGET_MASK):
            values = (current[row, : len(mask)] + 0.3 * torch.randn(len(mask), generator=generator)).tolist()
            values = [v if m else float("nan") for v, m in zip(values, mask, strict=True)]
            values[mask.index(1)] = float("nan")
            out.append(values)
        return out

    def reference(self, old, max_grad_norm):
        """The step computed independently: every sequence in one batch, full logits, one backward."""
        parameters = [p for _, p in self.adapter]
        for p in parameters:
            p.grad = None
        width = max(len(s) for s in SEQUENCES) - 1
        mask = padded(TARGET_MASK, width)
        old_t = padded(old, width, float("nan"))
        on_policy = torch.isnan(old_t) & (mask == 1)
        with torch.no_grad(), self.peft.disable_adapter():
            ref = full_logprobs(self.peft, SEQUENCES)
        batch = {
            "mask": mask,
            "weighted_mask": mask,
            "old_logprobs": torch.nan_to_num(old_t, nan=0.0),
            "on_policy": on_policy,
            "advantages": torch.tensor([1.0, -1.0, 0.5, -0.5]),
            "ref_logprobs": ref,
        }
        sums = objective_loss(GRPO, full_logprobs(self.peft, SEQUENCES), batch, normaliser(TARGET_MASK))
        sums["loss"].backward()
        replay_width = max(len(s) for s in REPLAY) - 1
        replay_mask = padded(REPLAY_MASK, replay_width)
        replay_batch = {
            "mask": replay_mask,
            "weighted_mask": replay_mask * padded([[1.0, 2.0, 1.0, 0.5], [1.0, 1.0]], replay_width),
            "old_logprobs": torch.zeros_like(replay_mask),
            "on_policy": torch.zeros_like(replay_mask, dtype=torch.bool),
            "advantages": torch.zeros(2),
            "ref_logprobs": None,
        }
        replayed = objective_loss(
            {"kind": "sft"}, full_logprobs(self.peft, REPLAY), replay_batch, normaliser(REPLAY_MASK)
        )
        (replayed["loss"] * 0.5).backward()
        norm = torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm if max_grad_norm else math.inf)
        gradient = [p.grad.clone() for p in parameters]
        optimizer = torch.optim.AdamW(
            parameters,
            lr=0.02,
            betas=(OPTIMIZER["beta1"], OPTIMIZER["beta2"]),
            eps=OPTIMIZER["eps"],
            weight_decay=OPTIMIZER["weight_decay"],
        )
        optimizer.step()
        for p in parameters:
            p.grad = None
        return float(sums["loss"].detach()), float(replayed["loss"].detach()), float(norm), gradient

    def test_step_equals_the_full_batch_computation(self):
        randomise_b(self.peft)  # so A has a gradient too
        old = self.sampled_logprobs()
        start = {n: p.detach().clone() for n, p in self.adapter}
        for max_grad_norm in (None, 0.05):
            with self.subTest(max_grad_norm=max_grad_norm):
                with torch.no_grad():
                    for n, p in self.adapter:
                        p.copy_(start[n])
                self.reset()
                result, events = self.step(step_args(max_grad_norm), step_tensors(old))
                optimizer = self.server.session.optimizer
                # After one step AdamW's m is (1 − β1)·g: the engine's clipped gradient, read back.
                engine_grads = [optimizer.state[p]["exp_avg"] / (1 - OPTIMIZER["beta1"]) for _, p in self.adapter]
                engine_after = {n: p.detach().clone() for n, p in self.adapter}
                with torch.no_grad():
                    for n, p in self.adapter:
                        p.copy_(start[n])
                loss, replay_loss, norm, grads = self.reference(old, max_grad_norm)

                self.assertAlmostEqual(sum(m["loss"] for m in result["micro_batches"]), loss, delta=1e-6)
                self.assertAlmostEqual(
                    sum(m["loss"] for m in result["replay"]["micro_batches"]), replay_loss, delta=1e-6
                )
                self.assertAlmostEqual(result["grad_norm"], norm, delta=1e-6 * norm)
                if max_grad_norm:
                    self.assertGreater(norm, max_grad_norm, "the clip binds in this case")
                for (name, p), g, e in zip(self.adapter, engine_grads, grads, strict=True):
                    scale = float(e.abs().max()) + 1e-12
                    self.assertLess(largest_difference(g, e)[0] / scale, 1e-4, f"gradient of {name}")
                    self.assertGreater(scale, 1e-8, f"{name} has a gradient")
                    difference = float((engine_after[name] - p.detach()).norm() / p.detach().norm())
                    self.assertLess(difference, 1e-5, f"{name} after the step")
                self.assertEqual(result["optimizer_step"], 1)
                self.assertEqual(result["tokens"], sum(map(len, SEQUENCES)) + sum(map(len, REPLAY)))
                # Padded: [3, 0] → 2 × 8, [1] → 5, [2] → 3; replay [1] → 3, [0] → 5.
                self.assertEqual(result["padded_tokens"], 16 + 5 + 3 + 3 + 5)
                self.assertEqual(result["replay"]["sequences"], 2)
                self.assertEqual(
                    [d for _, d in events],
                    [
                        {"done": 1, "total": 3, "tokens": 15},
                        {"done": 2, "total": 3, "tokens": 20},
                        {"done": 3, "total": 3, "tokens": 23},
                    ],
                )
                sums = result["micro_batches"][0]
                for key in (
                    "policy_loss",
                    "kl",
                    "kl_sum",
                    "tokens",
                    "sequences",
                    "ratio_sum",
                    "clipped_low",
                    "clipped_high",
                    "is_weight_sum",
                    "is_ratio_max",
                ):
                    self.assertIn(key, sums)
                self.assertEqual(sum(m["tokens"] for m in result["micro_batches"]), normaliser(TARGET_MASK)["tokens"])

    def test_two_steps_move_every_adapter_tensor_and_no_base_weight(self):
        base = {n: p.detach().clone() for n, p in self.peft.named_parameters() if ".lora_" not in n}
        before = {n: p.detach().clone() for n, p in self.adapter}
        self.assertEqual(self.reset()["tensors"], len(self.adapter))
        old = [[float("nan")] * len(m) for m in TARGET_MASK]
        for _ in range(2):  # B starts at 0, so A's first gradient is 0: the second step moves A
            result, _ = self.step(step_args(1.0), step_tensors(old))
        self.assertEqual(result["optimizer_step"], 2)
        for n, p in self.adapter:
            self.assertFalse(torch.equal(p, before[n]), f"{n} did not change")
        for n, p in self.peft.named_parameters():
            if n in base:
                self.assertTrue(torch.equal(p, base[n]), f"base weight {n} changed")
                self.assertFalse(p.requires_grad, n)

    def test_lora_fa_freezes_a(self):
        randomise_b(self.peft)
        before = {n: p.detach().clone() for n, p in self.adapter}
        self.assertEqual(self.reset(train_a=False)["tensors"], len(self.adapter) // 2)
        old = [[float("nan")] * len(m) for m in TARGET_MASK]
        for _ in range(2):
            self.step(step_args(1.0, replay=False), step_tensors(old))
        for n, p in self.adapter:
            if ".lora_A." in n:
                self.assertFalse(p.requires_grad, n)
                self.assertTrue(torch.equal(p, before[n]), f"{n} changed under LoRA-FA")
            else:
                self.assertFalse(torch.equal(p, before[n]), f"{n} did not change")

    def test_adamw_update_by_hand(self):
        """One adapter tensor θ = 1 everywhere, lr 0.1, λ 0.01, β (0.9, 0.999), ε 1e-8, gradients 0.5 then −0.25.
        Step 1: θ ← 1·(1 − 0.1·0.01) = 0.999; m = 0.1·0.5 = 0.05, v = 0.001·0.25 = 0.00025;
                m̂ = 0.05 / 0.1 = 0.5, v̂ = 0.00025 / 0.001 = 0.25; θ ← 0.999 − 0.1·0.5 / (0.5 + 1e-8) = 0.899000002.
        Step 2: θ ← 0.899000002·0.999 = 0.898101002; m = 0.045 − 0.025 = 0.02, v = 0.00024975 + 0.0000625 = 0.00031225;
                m̂ = 0.02 / 0.19 = 0.105263158, v̂ = 0.00031225 / 0.001999 = 0.156203102, √v̂ = 0.395225381;
                θ ← 0.898101002 − 0.1·0.105263158 / 0.395225381 = 0.871467299."""
        self.server.optimizer_reset(
            Args(
                {"learning_rate": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01},
                "optimizer-reset",
            ),
            {},
            None,
        )
        optimizer = self.server.session.optimizer
        name, theta = self.adapter[1]
        with torch.no_grad():
            theta.fill_(1.0)
        for gradient, expected in ((0.5, 0.899000002), (-0.25, 0.871467299)):
            for _, p in self.adapter:
                p.grad = torch.zeros_like(p)
            theta.grad = torch.full_like(theta, gradient)
            optimizer.step()
            self.assertLess(float((theta.detach() - expected).abs().max()), 1e-6, name)

    def test_nonfinite_gradient_is_an_error_and_changes_nothing(self):
        self.reset()
        before = {n: p.detach().clone() for n, p in self.adapter}
        old = [[float("nan")] * len(m) for m in TARGET_MASK]
        tensors = step_tensors(old)
        tensors["advantages"] = torch.tensor([math.inf, 1.0, 1.0, 1.0])
        with self.assertRaises(EngineError) as caught:
            self.step(step_args(1.0), tensors)
        self.assertEqual(caught.exception.code, "engine-nonfinite-gradient")
        self.assertEqual(self.server.session.optimizer_step, 0)
        for n, p in self.adapter:
            self.assertTrue(torch.equal(p, before[n]), n)
            self.assertIsNone(p.grad, n)
        result, _ = self.step(step_args(1.0), step_tensors(old))  # the next step runs as usual
        self.assertEqual(result["optimizer_step"], 1)

    def test_bad_requests_name_the_field(self):
        self.reset()
        old = [[float("nan")] * len(m) for m in TARGET_MASK]
        cases = {
            "target_mask": lambda t, a: t.update(target_mask=t["target_mask"][:-1]),
            "micro_batches": lambda t, a: a.update(micro_batches=[[0, 1], [2]]),
            "neither a finite old_logprobs entry nor the on_policy flag": lambda t, a: t.update(
                on_policy=torch.zeros_like(t["on_policy"])
            ),
            "loss_kind": lambda t, a: a.update(objective={**GRPO, "loss": {**GRPO["loss"], "loss_kind": "nope"}}),
            "pad_token_id": lambda t, a: a.update(pad_token_id=10**6),
            "ids": lambda t, a: t.update(ids=torch.full_like(t["ids"], 600)),
        }
        for needle, change in cases.items():
            with self.subTest(needle):
                tensors, args = step_tensors(old), step_args(1.0)
                change(tensors, args)
                with self.assertRaises(EngineError) as caught:
                    self.step(args, tensors)
                self.assertEqual(caught.exception.code, "engine-bad-request")
                self.assertIn(needle, str(caught.exception))
        self.assertEqual(self.server.session.optimizer_step, 0)


class CheckpointingTest(unittest.TestCase):
    def test_gradient_checkpointing_and_dropout_at_scoring(self):
        """Recomputing the decoder in backward gives the same step; LoRA dropout acts in `step` only."""
        lora = {**LORA, "dropout": 0.5}
        servers = [in_process(tiny_model_dir(), load={"gradient_checkpointing": on}, lora=lora) for on in (False, True)]
        for server in servers:
            randomise_b(server.session.peft)
            server.optimizer_reset(Args({**OPTIMIZER, "train_a": True}, "optimizer-reset"), {}, None)
            scored = [
                server.logprobs(Args({"adapter": True}, "logprobs"), views(flat(SEQUENCES)), None)[1] for _ in "ab"
            ]
            self.assertTrue(torch.equal(scored[0]["logprobs"], scored[1]["logprobs"]), "no dropout when scoring")
            torch.manual_seed(0)  # the same dropout masks in both servers' steps
            old = [[float("nan")] * len(m) for m in TARGET_MASK]
            server.step(Args(step_args(1.0), "step"), views(step_tensors(old)), lambda *_: None)
        adapters = [dict(server.session.peft.named_parameters()) for server in servers]
        for name, p in adapters[0].items():
            if ".lora_" in name:
                self.assertLess(largest_difference(p, adapters[1][name])[0], 1e-6, name)
        with torch.no_grad():
            servers[0].session.loaded.causal_lm.train()  # dropout on: the adapter's output varies
            noisy = [full_logprobs(servers[0].session.peft, SEQUENCES[:1]) for _ in "ab"]
            servers[0].session.loaded.causal_lm.eval()
        self.assertFalse(torch.equal(noisy[0], noisy[1]), "dropout 0.5 acts in training mode")


class AdapterCreateTest(unittest.TestCase):
    def test_a_target_the_model_lacks_is_named_and_leaves_no_adapter(self):
        server = in_process(tiny_model_dir())
        for targets in (["q_proj", "qproj"], ["qproj"]):
            with self.assertRaises(EngineError) as caught:
                server.adapter_create(Args({"lora": {**LORA, "targets": targets}}, "adapter-create"), {}, None)
            self.assertEqual(caught.exception.code, "engine-bad-request")
            self.assertIn("qproj", str(caught.exception))
            self.assertIsNone(server.session.peft)
            self.assertFalse(any(".lora_" in n for n, _ in server.session.loaded.causal_lm.named_parameters()))
        result, _ = server.adapter_create(
            Args({"lora": {**LORA, "targets": ["self_attn.q_proj"]}}, "adapter-create"), {}, None
        )
        self.assertEqual(result["trainable_parameters"], 2 * (4 * 64 + 64 * 4))  # 2 layers × (A [4, 64] + B [64, 4])


class OrthogonalInitTest(unittest.TestCase):
    def test_rows_or_columns_orthonormal_times_one_over_scaling(self):
        for r, use_rslora in ((4, False), (96, True)):  # q_proj's input is 64: r = 96 > in
            server = in_process(
                tiny_model_dir(),
                lora={"r": r, "alpha": 8, "targets": ["q_proj"], "init_a": "orthogonal", "use_rslora": use_rslora},
            )
            scaling = 8 / math.sqrt(r) if use_rslora else 8 / r
            for name, p in server.session.peft.named_parameters():
                if ".lora_A." not in name:
                    continue
                a = p.detach().double() * scaling  # [r, in]
                gram = a @ a.T if r <= a.shape[1] else a.T @ a  # rows (r ≤ in) or columns orthonormal
                self.assertLess(float((gram - torch.eye(gram.shape[0], dtype=torch.float64)).abs().max()), 1e-5, name)


if __name__ == "__main__":
    unittest.main()
