# edgerl_torch.losses against the TypeScript definitions (test/fixtures/grpo/loss-vectors.json, generated
# from trainer/grpo/objective-loss.ts) in float32 and float64, and against hand-computed cases.
# Run: PYTHONPATH=torch-engine python -m unittest discover -s torch-engine/tests -t torch-engine -p 'test_losses.py'
from __future__ import annotations

import json
import math
import unittest
from pathlib import Path

import torch

from edgerl_torch.losses import objective_loss

VECTORS = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "grpo" / "loss-vectors.json"
# The file holds float32 results of the TypeScript; both precisions here must land within this.
ABSOLUTE = 1e-5
RELATIVE = 1e-5


def grid(values: list, dtype: torch.dtype) -> torch.Tensor:
    """A [B, T] tensor from nested lists, null as NaN."""
    return torch.tensor([[math.nan if v is None else v for v in row] for row in values], dtype=dtype)


def run(objective: dict, inputs: dict, normaliser: dict, dtype: torch.dtype) -> tuple[dict, list]:
    """objective_loss on the inputs: every sum as a float, and ∂loss/∂logprobs as nested lists."""
    logprobs = grid(inputs["logprobs"], dtype).requires_grad_(True)
    batch = {
        "mask": grid(inputs["mask"], dtype),
        "weighted_mask": grid(inputs.get("weighted_mask", inputs["mask"]), dtype),
        "old_logprobs": grid(inputs["old_logprobs"], dtype),
        "on_policy": grid(inputs["on_policy"], torch.float32).to(torch.bool),
        "advantages": torch.tensor(inputs["advantages"], dtype=dtype),
        "ref_logprobs": None if inputs.get("ref_logprobs") is None else grid(inputs["ref_logprobs"], dtype),
    }
    sums = objective_loss(objective, logprobs, batch, normaliser)
    sums["loss"].backward()
    assert logprobs.grad is not None
    return {key: value.item() for key, value in sums.items()}, logprobs.grad.tolist()


def largest_difference(got: dict, grad: list, expected: dict) -> tuple[str, list[str]]:
    """(the entry that uses most of its tolerance ABSOLUTE + RELATIVE·|expected|, every entry beyond it)."""
    worst, report, failures = -1.0, "nothing compared", []
    pairs = [(f"sums.{key}", got[key], value) for key, value in expected["sums"].items()]
    pairs += [
        (f"grad[{b}][{t}]", value, want)
        for b, (row, want_row) in enumerate(zip(grad, expected["grad"]))
        for t, (value, want) in enumerate(zip(row, want_row))
    ]
    for name, value, want in pairs:
        difference = abs(value - want)
        allowed = ABSOLUTE + RELATIVE * abs(want)
        used = math.inf if math.isnan(difference) else difference / allowed
        if used > worst:
            worst, report = used, f"|difference| {difference:.3g} at {name} (tolerance {allowed:.3g})"
        if not difference <= allowed:
            failures.append(f"{name}: got {value!r}, want {want!r}")
    return report, failures


class LossVectorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.cases = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]

    def check(self, dtype: torch.dtype) -> None:
        self.assertGreater(len(self.cases), 10)
        for case in self.cases:
            with self.subTest(case=case["name"], dtype=str(dtype)):
                got, grad = run(case["objective"], case["inputs"], case["normaliser"], dtype)
                self.assertEqual(sorted(got), sorted(case["expected"]["sums"]), "the sums returned")
                self.assertEqual(len(grad), len(case["expected"]["grad"]))
                largest, failures = largest_difference(got, grad, case["expected"])
                self.assertEqual(failures, [], f"{case['name']} ({dtype}): largest {largest}")

    def test_float32_matches_the_typescript(self) -> None:
        self.check(torch.float32)

    def test_float64_matches_the_typescript(self) -> None:
        self.check(torch.float64)


def grpo(loss_kind: str, aggregation: str, clip=(0.2, 0.28), beta=0.0, cap=None) -> dict:
    return {
        "kind": "grpo",
        "loss": {
            "loss_kind": loss_kind,
            "clip": {"low": clip[0], "high": clip[1]},
            "aggregation": aggregation,
            "beta": beta,
            "correction": None if cap is None else {"kind": "tis", "cap": cap},
        },
    }


def inputs(logprobs, old, mask, advantages, on_policy=None, ref=None, weighted=None) -> dict:
    return {
        "logprobs": logprobs,
        "old_logprobs": old,
        "mask": mask,
        "weighted_mask": weighted if weighted is not None else mask,
        "on_policy": on_policy if on_policy is not None else [[0] * len(row) for row in mask],
        "advantages": advantages,
        "ref_logprobs": ref,
    }


class HandComputedTest(unittest.TestCase):
    """Arithmetic done by hand, independent of the TypeScript and of the vectors."""

    def assert_case(self, objective, case_inputs, normaliser, sums: dict, grad: list) -> None:
        for dtype in (torch.float32, torch.float64):
            got, got_grad = run(objective, case_inputs, normaliser, dtype)
            largest, failures = largest_difference(got, got_grad, {"sums": sums, "grad": grad})
            self.assertEqual(failures, [], f"{dtype}: largest {largest}")

    def test_ppo_clip_token_mean_part_of_a_step(self):
        # Band [0.8, 1.28], A = 1, ρ = [1.5, 0.5], third token off the mask (NaN there), N_step = 4.
        # ρ 1.5: min(1.5, 1.28) = 1.28 → L = −1.28, clipped high, gradient 0 (clipped branch).
        # ρ 0.5: min(0.5, 0.8) = 0.5 → L = −0.5, gradient −A·ρ = −0.5.
        # loss = (−1.28 − 0.5) / 4 = −0.445; ∂/∂ℓ = [0, −0.5 / 4, 0] = [0, −0.125, 0].
        self.assert_case(
            grpo("ppo-clip", "token-mean"),
            inputs([[-1.0, -0.5, None]], [[-1.0 - math.log(1.5), -0.5 - math.log(0.5), None]], [[1, 1, 0]], [1.0]),
            {"tokens": 4, "sequences": 2},
            {
                "loss": -0.445,
                "policy_loss": -0.445,
                "tokens": 2,
                "sequences": 1,
                "ratio_sum": 2.0,
                "clipped_low": 0,
                "clipped_high": 1,
            },
            [[0.0, -0.125, 0.0]],
        )

    def test_cispo_sequence_mean_with_an_on_policy_token_and_an_empty_sequence(self):
        # ART band [0, 5], A = 0.5. Row 0: ρ = 3 → w = 3, L = −3·0.5·(−2) = 3; the on-policy token has
        # old = current → ρ = 1, w = 1, L = −1·0.5·(−1) = 0.5. Row 1 trains nothing (adds 0).
        # sequence-mean: (3 + 0.5) / 2 tokens = 1.75, over S_step = 2 → loss 0.875.
        # ∂/∂ℓ = −w·A / len / S = [−3·0.5/4, −1·0.5/4] = [−0.375, −0.125]; Σρ = 3 + 1 = 4.
        self.assert_case(
            grpo("cispo", "sequence-mean", clip=(1.0, 4.0)),
            inputs(
                [[-2.0, -1.0], [-1.0, -1.0]],
                [[-2.0 - math.log(3), 0.0], [0.0, 0.0]],
                [[1, 1], [0, 0]],
                [0.5, -1.0],
                on_policy=[[0, 1], [0, 0]],
            ),
            {"tokens": 2, "sequences": 2},
            {
                "loss": 0.875,
                "policy_loss": 0.875,
                "tokens": 2,
                "sequences": 1,
                "ratio_sum": 4.0,
                "clipped_low": 0,
                "clipped_high": 0,
            },
            [[-0.375, -0.125], [0.0, 0.0]],
        )

    def test_k3_kl_added_with_beta(self):
        # On-policy tokens with A = 0: the policy loss and its gradient are 0. ℓ_ref − ℓ = [ln 2, 0]:
        # k3 = [2 − ln 2 − 1, 0] = [0.30685282, 0]; token-mean over 2 → kl 0.15342641;
        # loss = 0.5·kl = 0.07671320. ∂k3/∂ℓ = 1 − e^(ℓ_ref − ℓ) = [−1, 0] → ∂loss/∂ℓ = 0.5·[−1, 0]/2.
        self.assert_case(
            grpo("ppo-clip", "token-mean", beta=0.5),
            inputs([[-1.0, -2.0]], [[0.0, 0.0]], [[1, 1]], [0.0], on_policy=[[1, 1]], ref=[[-1.0 + math.log(2), -2.0]]),
            {"tokens": 2, "sequences": 1},
            {
                "loss": 0.07671320,
                "policy_loss": 0.0,
                "kl": 0.15342641,
                "kl_sum": 0.30685282,
                "tokens": 2,
                "sequences": 1,
                "ratio_sum": 2.0,
                "clipped_low": 0,
                "clipped_high": 0,
            },
            [[-0.25, 0.0]],
        )

    def test_truncated_importance_sampling(self):
        # cap 2, A = −1, π_prox = current, so the PPO ratio is 1 and the surrogate is ρ·A = −1 per token.
        # π_prox / π_sampler = [4, 0.5, e^30 → clamped e^20]: w = [2, 0.5, 2], two truncated.
        # L = −(ρA)·w = [2, 0.5, 2], token-mean 4.5 / 3 = 1.5; ∂/∂ℓ = −A·w·ρ / 3 = [2, 0.5, 2] / 3.
        self.assert_case(
            grpo("ppo-clip", "token-mean", cap=2.0),
            inputs([[-1.0, -1.0, -1.0]], [[-1.0 - math.log(4), -1.0 - math.log(0.5), -31.0]], [[1, 1, 1]], [-1.0]),
            {"tokens": 3, "sequences": 1},
            {
                "loss": 1.5,
                "policy_loss": 1.5,
                "tokens": 3,
                "sequences": 1,
                "ratio_sum": 3.0,
                "clipped_low": 0,
                "clipped_high": 0,
                "is_weight_sum": 4.5,
                "is_weight_max": 2.0,
                "is_truncated": 2,
                "is_ratio_sum": 4.5 + math.exp(20),
                "is_ratio_max": math.exp(20),
            },
            [[2 / 3, 0.5 / 3, 2 / 3]],
        )

    def test_sft_with_loss_weights_and_nan_off_the_mask(self):
        # w = [1, 0.5, 0] on the mask, ℓ = [−1, −2, −3], NaN off it, N_step = 4:
        # loss = (1·1 + 0.5·2 + 0·3) / 4 = 0.5; ∂/∂ℓ = −w / 4 = [−0.25, −0.125, 0, 0].
        self.assert_case(
            {"kind": "sft"},
            inputs([[-1.0, -2.0, -3.0, None]], [[0.0] * 4], [[1, 1, 1, 0]], [0.0], weighted=[[1, 0.5, 0, 0]]),
            {"tokens": 4, "sequences": 1},
            {
                "loss": 0.5,
                "policy_loss": 0.5,
                "tokens": 3,
                "sequences": 1,
                "ratio_sum": 3,
                "clipped_low": 0,
                "clipped_high": 0,
            },
            [[-0.25, -0.125, 0.0, 0.0]],
        )

    def test_refuses_bad_settings_with_messages_that_say_what(self):
        ok = inputs([[-1.0]], [[-1.0]], [[1]], [1.0])
        step = {"tokens": 1, "sequences": 1}
        for objective, message in [
            (grpo("cispo", "token-mean", clip=(1.5, 4.0)), r"clip\.low must be in \[0, 1\]"),
            (grpo("cispo", "token-mean", clip=(0.2, math.inf)), r"clip\.high must be a finite number >= 0"),
            (grpo("cispo", "token-mean", beta=-1.0), r"beta must be >= 0"),
            (grpo("cispo", "token-mean", beta=0.1), r"no ref_logprobs were given"),
            (grpo("cispo", "token-mean", cap=0.5), r"cap must be at least 1 and below e\^20"),
            (grpo("cispo", "token-mean", cap=math.inf), r"cap must be at least 1 and below e\^20"),
            (grpo("reinforce", "token-mean"), r'unknown loss_kind "reinforce"'),
            (grpo("cispo", "sum"), r'unknown aggregation "sum"'),
            ({"kind": "dpo"}, r'unknown objective kind "dpo"'),
        ]:
            with self.subTest(message=message), self.assertRaisesRegex(ValueError, message):
                run(objective, ok, step, torch.float32)
        with self.assertRaisesRegex(ValueError, r"tokens > 0 and sequences > 0"):
            run(grpo("cispo", "token-mean"), ok, {"tokens": 0, "sequences": 1}, torch.float32)
        with self.assertRaisesRegex(ValueError, r"mask must match logprobs \[1, 1\], got \[1, 2\]"):
            run(grpo("cispo", "token-mean"), {**ok, "mask": [[1, 1]]}, step, torch.float32)


if __name__ == "__main__":
    unittest.main()
