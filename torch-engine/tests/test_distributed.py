# Two ranks (gloo, CPU) against one process, over the protocol: the same step (micro-batches dealt
# round-robin, one all-reduce of the summed gradients) leaves the same adapter; log-probs, predictions
# and loss sums come back complete and in order; a bad request is a reply on every rank; a failure on one
# rank only (a double of the gathered outcomes) fails the op everywhere and rolls the others back.
import os
import unittest

import torch
from safetensors.torch import load_file

from edgerl_torch.protocol import encode_frame
from edgerl_torch.server import Server
from edgerl_torch.tensors import from_torch
from edgerl_torch.world import SingleProcess
from tests.support import Engine, flat, largest_difference, scratch_dir, tiny_model_dir

SEQUENCES = [[1, 5, 9, 200, 7, 3, 44], [4, 8, 15, 16, 23], [300, 2, 17], [9, 10, 11, 12, 13, 14, 15, 16], [30, 31, 32]]
MASKS = [[0, 0, 1, 1, 1, 1], [0, 1, 1, 1], [0, 1], [0, 0, 0, 1, 1, 1, 1], [1, 1]]
REPLAY = [[7, 8, 9, 10, 11], [20, 21, 22]]
OPTIMIZER = {"learning_rate": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0}
LORA = {
    "r": 4,
    "alpha": 8,
    "dropout": 0.0,
    "targets": ["q_proj", "v_proj", "down_proj"],
    "use_rslora": False,
    "init_a": "kaiming-uniform",
}


def step_request():
    n = sum(map(len, MASKS))
    mask = torch.tensor([x for m in MASKS for x in m], dtype=torch.uint8)
    generator = torch.Generator().manual_seed(0)
    old = -6.3 + 0.3 * torch.randn(n, generator=generator)  # near the tiny model's log(1/576) ≈ −6.36
    old[::3] = float("nan")  # a third of the targets were not sampled with log-probs: on-policy
    replay = flat(REPLAY)
    tensors = {
        **flat(SEQUENCES),
        "target_mask": mask,
        "old_logprobs": old,
        "on_policy": (torch.isnan(old) & (mask == 1)).to(torch.uint8),
        "advantages": torch.tensor([1.0, -1.0, 0.5, -0.5, 0.25]),
        "replay_lengths": replay["lengths"],
        "replay_ids": replay["ids"],
        "replay_target_mask": torch.tensor([0, 1, 1, 1, 1, 1], dtype=torch.uint8),
    }
    args = {
        "objective": {
            "kind": "grpo",
            "loss": {
                "loss_kind": "cispo",
                "clip": {"low": 0.2, "high": 0.28},
                "aggregation": "sequence-mean",
                "beta": 0.04,
                "correction": None,
            },
        },
        "micro_batches": [[3, 0], [1], [2, 4]],
        "normaliser": {"tokens": int(mask.sum()), "sequences": 5},
        "max_grad_norm": 0.5,
        "learning_rate": 0.01,
        "pad_token_id": 547,
        "replay": {"weight": 0.3, "micro_batches": [[0], [1]], "normaliser": {"tokens": 5, "sequences": 2}},
    }
    return args, tensors


class TwoRanksTest(unittest.TestCase):
    def run_session(self, name: str, *flags: str) -> dict:
        engine = Engine(*flags)
        out = {"dir": os.path.join(self.dirs, name)}
        try:
            out["hello"], _ = engine.ok("hello", {"protocol": 1})
            engine.ok("load-model", {"model_dir": tiny_model_dir(), "logprob_chunk_tokens": 5, "seed": 0})
            engine.ok("adapter-create", {"lora": LORA, "seed": 11})
            engine.ok("optimizer-reset", OPTIMIZER)
            for _ in range(2):  # the second step trains A too (B is 0 before the first)
                header, _, events = engine.call("step", *step_request())
                self.assertTrue(header["ok"], header.get("error"))
            out["step"], out["events"] = header["result"], events
            bad_args, bad_tensors = step_request()
            bad_tensors["advantages"] = bad_tensors["advantages"][:2]
            header, _, _ = engine.call("step", bad_args, bad_tensors)
            out["bad"] = header["error"]["code"]
            _, tensors = engine.ok("logprobs", {"adapter": True}, flat(SEQUENCES))
            out["logprobs"] = tensors["logprobs"]
            query = {
                **flat(SEQUENCES),
                "rows": torch.tensor([4, 0, 2, 3, 1], dtype=torch.int32),
                "positions": torch.tensor([2, 6, 0, 7, 1], dtype=torch.int32),
                "tokens": torch.tensor([1, 2, 3, 4, 5], dtype=torch.int32),
            }
            _, out["predict"] = engine.ok("predict", {"adapter": True}, query)
            out["memory"], _ = engine.ok("memory")
            engine.ok(
                "save", {"dir": out["dir"], "optimizer": True, "dtype": "float32", "base_model_name_or_path": None}
            )
            engine.ok("shutdown")
        finally:
            self.assertEqual(engine.close(), 0, engine.stderr() if engine.process.returncode else "")
        return out

    @classmethod
    def setUpClass(cls):
        cls.dirs = scratch_dir("ranks")

    def test_two_gloo_ranks_equal_one_process(self):
        one = self.run_session("one")
        two = self.run_session("two", "--processes", "2", "--backend", "gloo")
        self.assertEqual((one["hello"]["world_size"], two["hello"]["world_size"]), (1, 2))
        self.assertEqual(len(two["memory"]["ranks"]), 2)
        self.assertEqual((one["bad"], two["bad"]), ("engine-bad-request", "engine-bad-request"))

        # The adapters after two steps: relative norm difference per tensor.
        a = load_file(os.path.join(one["dir"], "adapter_model.safetensors"))
        b = load_file(os.path.join(two["dir"], "adapter_model.safetensors"))
        self.assertEqual(a.keys(), b.keys())
        for name in a:
            self.assertLess(float((a[name] - b[name]).norm() / a[name].norm()), 1e-5, name)
        moments_a = load_file(os.path.join(one["dir"], "optimizer.safetensors"))
        moments_b = load_file(os.path.join(two["dir"], "optimizer.safetensors"))
        for name in moments_a:
            self.assertLess(
                float((moments_a[name] - moments_b[name]).norm() / (moments_a[name].norm() + 1e-30)), 1e-4, name
            )

        s1, s2 = one["step"], two["step"]
        self.assertAlmostEqual(s1["grad_norm"], s2["grad_norm"], delta=1e-5 * s1["grad_norm"])
        self.assertEqual((s1["tokens"], s1["padded_tokens"]), (s2["tokens"], s2["padded_tokens"]))
        sums1 = s1["micro_batches"] + s1["replay"]["micro_batches"]  # 3 GRPO micro-batches, then 2 replayed
        sums2 = s2["micro_batches"] + s2["replay"]["micro_batches"]
        self.assertEqual((len(s1["micro_batches"]), len(sums1), len(sums2)), (3, 5, 5))
        for m1, m2 in zip(sums1, sums2, strict=True):
            self.assertEqual(m1.keys(), m2.keys())
            for key in m1:
                self.assertAlmostEqual(m1[key], m2[key], delta=1e-5 * (1 + abs(m1[key])), msg=key)
        self.assertEqual(one["events"][-1]["data"], two["events"][-1]["data"])
        self.assertEqual(two["events"][-1]["data"]["done"], 3)

        self.assertLess(largest_difference(one["logprobs"], two["logprobs"])[0], 1e-5)
        self.assertTrue(torch.equal(one["predict"]["argmax"], two["predict"]["argmax"]))
        self.assertLess(largest_difference(one["predict"]["logprobs"], two["predict"]["logprobs"])[0], 1e-5)


if __name__ == "__main__":
    unittest.main()


class OneFailingRank(SingleProcess):
    """A double of rank 0 of two ranks whose rank 1 fails every op (say, out of memory on its GPU):
    the outcomes rank 0 would gather. Every other collective is one process's."""

    def outcomes(self, failure):
        return [failure, ("engine-out-of-memory", "CUDA out of memory on rank 1")]


def request(op: str, args: dict, tensors: dict | None = None) -> tuple[bytes, bytearray]:
    """The raw header and payload of a request frame, as the server's loop hands them over."""
    frame = encode_frame({"id": 1, "op": op, "args": args}, {k: from_torch(v) for k, v in (tensors or {}).items()})
    header_length = int.from_bytes(frame[:4], "little")
    return frame[8 : 8 + header_length], bytearray(frame[8 + header_length :])


class RanksAgreeTest(unittest.TestCase):
    """An op that fails on any rank fails on all: the others roll their state back, or stop."""

    def test_a_failure_on_one_rank_is_the_reply_and_the_state_rolls_back(self):
        server = Server(OneFailingRank())
        reply, _ = server.handle(*request("load-model", {"model_dir": tiny_model_dir()}), None)
        self.assertEqual(
            reply["error"], {"code": "engine-out-of-memory", "message": "rank 1: CUDA out of memory on rank 1"}
        )
        self.assertIsNone(server.session.loaded, "rank 0 dropped the model rank 1 could not load")

        server.world = server.session.world = SingleProcess()
        self.assertTrue(server.handle(*request("load-model", {"model_dir": tiny_model_dir()}), None)[0]["ok"])
        server.world = server.session.world = OneFailingRank()
        reply, _ = server.handle(*request("adapter-create", {"lora": LORA, "seed": 1}), None)
        self.assertFalse(reply["ok"])
        self.assertIsNone(server.session.peft)
        self.assertFalse(any(".lora_" in n for n, _ in server.session.loaded.causal_lm.named_parameters()))
        self.assertIsNone(server.fatal)

        server.world = server.session.world = SingleProcess()
        for op, args in (("adapter-create", {"lora": LORA, "seed": 1}), ("optimizer-reset", OPTIMIZER)):
            self.assertTrue(server.handle(*request(op, args), None)[0]["ok"], op)
        server.world = server.session.world = OneFailingRank()
        reply, _ = server.handle(*request("step", *step_request()), lambda *_: None)
        self.assertFalse(reply["ok"])
        self.assertIn("the adapters differ", server.fatal)
