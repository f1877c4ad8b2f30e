# Two ranks with --sharding fsdp (FSDP2 over gloo, on the CPU) against one process, over the protocol:
# a GRPO step with replay and a reference pass over an odd number of micro-batches (rank 1 idles in the
# last round), and an SFT step with a micro-batch that trains nothing, leave the same adapter and moments;
# the files each writes load in the other and continue alike; log-probs and predictions agree; failures
# (on every rank, or on rank 0 alone) are replies on all ranks and the engine keeps serving; bf16 weights
# with LoRA-FA step alike too.
import json
import os
import subprocess
import sys
import unittest

import torch
from safetensors import safe_open
from safetensors.torch import load_file

from tests.support import Engine, engine_env, flat, largest_difference, scratch_dir, tiny_model_dir
from tests.test_distributed import LORA, OPTIMIZER, SEQUENCES, step_request

# Per tensor, ‖fsdp − one‖ / ‖one‖: the two differ only in the order float sums are taken.
TOLERANCE = 1e-5

# Three micro-batches for two ranks: rank 1 runs an idle forward pass in the second round.
ODD_PLAN = {"adapter": True, "micro_batches": [[0, 3], [1], [2, 4]]}
ODD_PREDICT_PLAN = {"adapter": True, "micro_batches": [[4], [0, 1], [2, 3]]}

SFT_MASKS = [[0, 1, 1, 1, 1, 1], [0, 1, 1, 1], [0, 0], [1, 1, 1, 1, 1, 1, 1], [0, 1]]


def sft_request():
    """Micro-batch 1 (rank 1's first) is sequence 2 alone, which trains no target: a backward pass with
    no gradient, which FSDP's ranks must make all the same."""
    mask = torch.tensor([x for m in SFT_MASKS for x in m], dtype=torch.uint8)
    tensors = {
        **flat(SEQUENCES),
        "target_mask": mask,
        "old_logprobs": torch.full((len(mask),), float("nan")),
        "on_policy": mask.clone(),
        "advantages": torch.zeros(len(SEQUENCES)),
    }
    args = {
        "objective": {"kind": "sft"},
        "micro_batches": [[0, 3], [2], [1, 4]],
        "normaliser": {"tokens": int(mask.sum()), "sequences": 4},
        "max_grad_norm": 1.0,
        "learning_rate": 0.02,
        "pad_token_id": 547,
        "replay": None,
    }
    return args, tensors


def predict_request():
    return {
        **flat(SEQUENCES),
        "rows": torch.tensor([4, 0, 2, 3, 1], dtype=torch.int32),
        "positions": torch.tensor([2, 6, 0, 7, 1], dtype=torch.int32),
        "tokens": torch.tensor([1, 2, 3, 4, 5], dtype=torch.int32),
    }


class FsdpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dirs = scratch_dir("fsdp")
        cls.model = tiny_model_dir()
        cls.one = cls.run_one_process()
        cls.fsdp = cls.run_fsdp()
        cls.resumed = cls.resume_in_one_process()

    @classmethod
    def path(cls, name: str) -> str:
        return os.path.join(cls.dirs, name)

    @classmethod
    def save(cls, engine: Engine, name: str) -> None:
        engine.ok("save", {"dir": cls.path(name), "optimizer": True, "dtype": "float32"})

    @classmethod
    def start(cls, *flags: str, checkpointing: bool = False) -> Engine:
        engine = Engine(*flags)
        load = {"model_dir": cls.model, "logprob_chunk_tokens": 5, "seed": 0, "gradient_checkpointing": checkpointing}
        engine.ok("load-model", load)
        return engine

    @classmethod
    def finish(cls, engine: Engine) -> None:
        engine.ok("shutdown")
        code = engine.close()
        if code != 0:
            raise AssertionError(f"the engine exited {code}")

    @classmethod
    def run_one_process(cls) -> dict:
        out = {}
        engine = cls.start()
        try:
            engine.ok("adapter-create", {"lora": LORA, "seed": 11})
            engine.ok("optimizer-reset", OPTIMIZER)
            out["step"], _ = engine.ok("step", *step_request())
            cls.save(engine, "one-1")
            engine.ok("step", *step_request())
            cls.save(engine, "one-2")
            out["logprobs"] = engine.ok("logprobs", ODD_PLAN, flat(SEQUENCES))[1]["logprobs"]
            out["base_logprobs"] = engine.ok("logprobs", {"adapter": False}, flat(SEQUENCES))[1]["logprobs"]
            out["predict"] = engine.ok("predict", ODD_PREDICT_PLAN, predict_request())[1]
            out["memory"], _ = engine.ok("memory")
            engine.ok("adapter-create", {"lora": LORA, "seed": 5})
            engine.ok("optimizer-reset", OPTIMIZER)
            out["sft"], _ = engine.ok("step", *sft_request())
            cls.save(engine, "one-sft")
            cls.finish(engine)
        finally:
            engine.close()
        return out

    @classmethod
    def run_fsdp(cls) -> dict:
        out = {"errors": {}}
        # Gradient checkpointing on, as the trainer runs (the one-process reference keeps activations).
        engine = cls.start("--processes", "2", "--backend", "gloo", "--sharding", "fsdp", checkpointing=True)

        def error(name, op, args=None, tensors=None):
            header, _, _ = engine.call(op, args, tensors)
            out["errors"][name] = None if header["ok"] else header["error"]

        try:
            out["hello"], _ = engine.ok("hello", {"protocol": 1})
            error("logprobs before an adapter", "logprobs", {"adapter": False}, flat(SEQUENCES))
            engine.ok("adapter-create", {"lora": LORA, "seed": 11})
            engine.ok("optimizer-reset", OPTIMIZER)
            args, tensors = step_request()
            tensors["advantages"] = torch.tensor([1.0, -1.0, float("inf"), -0.5, 0.25])  # micro-batch 2: rank 0's
            error("non-finite gradient", "step", args, tensors)
            header, _, out["events"] = engine.call("step", *step_request())
            out["step"] = header["result"] if header["ok"] else header["error"]
            cls.save(engine, "fsdp-1")
            args, tensors = step_request()
            tensors["advantages"] = tensors["advantages"][:2]
            error("bad request", "step", args, tensors)
            with open(cls.path("a-file"), "w", encoding="utf-8") as file:
                file.write("not a directory")
            error("save on rank 0", "save", {"dir": cls.path("a-file"), "optimizer": True})
            engine.ok("step", *step_request())
            cls.save(engine, "fsdp-2")
            out["logprobs"] = engine.ok("logprobs", ODD_PLAN, flat(SEQUENCES))[1]["logprobs"]
            out["base_logprobs"] = engine.ok("logprobs", {"adapter": False}, flat(SEQUENCES))[1]["logprobs"]
            out["predict"] = engine.ok("predict", ODD_PREDICT_PLAN, predict_request())[1]
            out["memory"], _ = engine.ok("memory")
            # A second adapter: the sharded model goes and the base is read again (session.py).
            engine.ok("adapter-create", {"lora": LORA, "seed": 5})
            engine.ok("optimizer-reset", OPTIMIZER)
            out["sft"], _ = engine.ok("step", *sft_request())
            cls.save(engine, "fsdp-sft")
            # One process's checkpoint: a PEFT directory and whole moments, sharded on loading.
            engine.ok("adapter-load", {"dir": cls.path("one-1")})
            engine.ok("optimizer-reset", OPTIMIZER)
            engine.ok("optimizer-load", {"path": os.path.join(cls.path("one-1"), "optimizer.safetensors")})
            engine.ok("step", *step_request())
            cls.save(engine, "fsdp-from-one-2")
            cls.finish(engine)
        finally:
            engine.close()
        return out

    @classmethod
    def resume_in_one_process(cls) -> dict:
        engine = cls.start()
        try:
            engine.ok("adapter-load", {"dir": cls.path("fsdp-1")})
            engine.ok("optimizer-reset", OPTIMIZER)
            engine.ok("optimizer-load", {"path": os.path.join(cls.path("fsdp-1"), "optimizer.safetensors")})
            engine.ok("step", *step_request())
            cls.save(engine, "one-from-fsdp-2")
            cls.finish(engine)
        finally:
            engine.close()
        return {}

    def assert_same_checkpoint(self, expected: str, actual: str) -> None:
        """Every adapter tensor and moment within TOLERANCE of the reference, relative to its norm."""
        for file in ("adapter_model.safetensors", "optimizer.safetensors"):
            a = load_file(os.path.join(self.path(expected), file))
            b = load_file(os.path.join(self.path(actual), file))
            self.assertEqual(a.keys(), b.keys(), file)
            for name in a:
                self.assertEqual(a[name].shape, b[name].shape, name)
                relative = float((b[name] - a[name]).norm() / (a[name].norm() + 1e-30))
                self.assertLess(relative, TOLERANCE, f"{actual}/{file}: {name}")

    def test_a_grpo_step_with_replay_and_an_idle_rank_equals_one_process(self):
        self.assertEqual((self.fsdp["hello"]["world_size"], self.fsdp["hello"]["sharding"]), (2, "fsdp"))
        one, two = self.one["step"], self.fsdp["step"]
        self.assertAlmostEqual(one["grad_norm"], two["grad_norm"], delta=TOLERANCE * one["grad_norm"])
        self.assertEqual((one["tokens"], one["padded_tokens"]), (two["tokens"], two["padded_tokens"]))
        sums_one = one["micro_batches"] + one["replay"]["micro_batches"]
        sums_two = two["micro_batches"] + two["replay"]["micro_batches"]
        self.assertEqual((len(one["micro_batches"]), len(sums_two)), (3, 5))
        for m1, m2 in zip(sums_one, sums_two, strict=True):
            self.assertEqual(m1.keys(), m2.keys())
            for key in m1:
                self.assertAlmostEqual(m1[key], m2[key], delta=TOLERANCE * (1 + abs(m1[key])), msg=key)
        self.assertEqual([event["data"]["done"] for event in self.fsdp["events"]], [2, 3])
        self.assert_same_checkpoint("one-1", "fsdp-1")
        self.assert_same_checkpoint("one-2", "fsdp-2")

    def test_an_sft_step_with_a_micro_batch_that_trains_nothing_equals_one_process(self):
        self.assertAlmostEqual(
            self.one["sft"]["grad_norm"], self.fsdp["sft"]["grad_norm"], delta=TOLERANCE * self.one["sft"]["grad_norm"]
        )
        self.assertEqual(self.fsdp["sft"]["micro_batches"][1]["tokens"], 0)
        self.assert_same_checkpoint("one-sft", "fsdp-sft")

    def test_checkpoints_move_between_one_process_and_fsdp(self):
        # The same files: PEFT's config, whole tensors in float32 under the same keys, the same metadata.
        configs = []
        for name in ("one-1", "fsdp-1"):
            with open(os.path.join(self.path(name), "adapter_config.json"), encoding="utf-8") as file:
                config = json.load(file)
            config["target_modules"] = sorted(config["target_modules"])  # PEFT writes a set: any order
            configs.append(config)
        self.assertEqual(configs[0], configs[1])
        for name in ("adapter_model.safetensors", "optimizer.safetensors"):
            with safe_open(os.path.join(self.path("one-1"), name), "pt") as a:
                with safe_open(os.path.join(self.path("fsdp-1"), name), "pt") as b:
                    self.assertEqual(a.metadata(), b.metadata(), name)
                    for key in a.keys():
                        self.assertEqual(a.get_tensor(key).dtype, b.get_tensor(key).dtype, key)
        # Saved by FSDP, continued by one process; saved by one process, continued by FSDP.
        self.assert_same_checkpoint("one-2", "one-from-fsdp-2")
        self.assert_same_checkpoint("one-2", "fsdp-from-one-2")

    def test_logprobs_and_predictions_equal_one_process(self):
        for name in ("logprobs", "base_logprobs"):
            difference, where = largest_difference(self.fsdp[name], self.one[name])
            self.assertLess(difference, TOLERANCE, f"{name}: at target {where}")
        self.assertTrue(torch.equal(self.fsdp["predict"]["argmax"], self.one["predict"]["argmax"]))
        difference, _ = largest_difference(self.fsdp["predict"]["logprobs"], self.one["predict"]["logprobs"])
        self.assertLess(difference, TOLERANCE)

    def test_each_rank_holds_its_shards_of_the_parameters(self):
        ranks = self.fsdp["memory"]["ranks"]
        self.assertEqual(len(ranks), 2)
        self.assertTrue(all(rank["peak_bytes"] > 0 for rank in ranks))
        # Every parameter, base and adapter, split between the two: the shards add up to the whole.
        whole = self.one["memory"]["parameter_bytes"]
        self.assertEqual(sum(rank["parameter_bytes"] for rank in ranks), whole)
        self.assertTrue(all(rank["parameter_bytes"] < 0.6 * whole for rank in ranks), ranks)

    def test_failures_are_replies_on_every_rank_and_the_engine_keeps_serving(self):
        errors = self.fsdp["errors"]
        self.assertEqual(errors["logprobs before an adapter"]["code"], "engine-state")
        self.assertIn("adapter-create or adapter-load first", errors["logprobs before an adapter"]["message"])
        # Rank 0's micro-batch diverged; the norm both ranks computed is infinite, and neither applied the
        # step: the adapters after the next two steps equal one process's that never tried it (above).
        self.assertEqual(errors["non-finite gradient"]["code"], "engine-nonfinite-gradient")
        self.assertEqual(errors["bad request"]["code"], "engine-bad-request")
        # Only rank 0 writes, so only rank 0 failed; the reply is its error, and the steps go on.
        self.assertIsNotNone(errors["save on rank 0"])
        self.assertIn("a-file", errors["save on rank 0"]["message"])
        self.assertNotIn("rank 1", errors["save on rank 0"]["message"])

    def test_fsdp_needs_several_processes(self):
        command = [sys.executable, "-m", "edgerl_torch", "--sharding", "fsdp"]
        done = subprocess.run(command, env=engine_env(), capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--processes N with N >= 2", done.stderr)


class FsdpBfloat16Test(unittest.TestCase):
    """bf16 base weights beside float32 LoRA matrices in one FSDP unit (what GPUs run: FSDP then gathers
    the mixed dtypes as bytes), under LoRA-FA (every A frozen after sharding)."""

    def test_a_bfloat16_lora_fa_step_equals_one_process(self):
        dirs = scratch_dir("fsdp-bf16")
        for name, flags in (("one", ()), ("fsdp", ("--processes", "2", "--backend", "gloo", "--sharding", "fsdp"))):
            engine = Engine(*flags)
            try:
                engine.ok("load-model", {"model_dir": tiny_model_dir(), "dtype": "bfloat16", "logprob_chunk_tokens": 5})
                engine.ok("adapter-create", {"lora": LORA, "seed": 11})
                engine.ok("optimizer-reset", {**OPTIMIZER, "train_a": False})
                for _ in range(2):
                    engine.ok("step", *step_request())
                engine.ok("save", {"dir": os.path.join(dirs, name), "optimizer": True})
                engine.ok("shutdown")
            finally:
                self.assertEqual(engine.close(), 0)
        for file in ("adapter_model.safetensors", "optimizer.safetensors"):
            a = load_file(os.path.join(dirs, "one", file))
            b = load_file(os.path.join(dirs, "fsdp", file))
            self.assertEqual(a.keys(), b.keys())
            if file == "optimizer.safetensors":
                self.assertFalse(any(".lora_A." in key for key in a), "LoRA-FA keeps no moments of A")
            for key in a:
                relative = float((b[key] - a[key]).norm() / (a[key].norm() + 1e-30))
                self.assertLess(relative, TOLERANCE, f"{file}: {key}")


if __name__ == "__main__":
    unittest.main()
