# The engine as the trainer runs it: a subprocess spoken to over stdin/stdout. A session that saves,
# restarts and resumes equals one that never stopped; an adapter written by the tfjs runtime loads and
# scores as tfjs scores it; failures are replies; the engine dies with its parent.
import json
import os
import signal
import subprocess
import sys
import time
import unittest

import torch
from safetensors.torch import load_file

from tests.support import REPO, Engine, engine_env, flat, largest_difference, scratch_dir, tiny_model_dir

LORA = {
    "r": 4,
    "alpha": 8,
    "dropout": 0.0,
    "targets": ["q_proj", "v_proj"],
    "use_rslora": False,
    "init_a": "kaiming-uniform",
}
OPTIMIZER = {"learning_rate": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01, "train_a": True}


def sft_step(sequences: list[list[int]], prompt: int = 1):
    """An SFT step's args and tensors: every target after the first `prompt` tokens is trained."""
    masks = [[0] * (prompt - 1) + [1] * (len(s) - prompt) for s in sequences]
    n = sum(map(len, masks))
    tensors = {
        **flat(sequences),
        "target_mask": torch.tensor([x for m in masks for x in m], dtype=torch.uint8),
        "old_logprobs": torch.full((n,), float("nan")),
        "on_policy": torch.tensor([x for m in masks for x in m], dtype=torch.uint8),
        "advantages": torch.ones(len(sequences)),
    }
    args = {
        "objective": {"kind": "sft"},
        "micro_batches": [[i] for i in range(len(sequences))],
        "normaliser": {"tokens": sum(map(sum, masks)), "sequences": len(sequences)},
        "max_grad_norm": 1.0,
        "learning_rate": 0.01,
        "pad_token_id": 547,
        "replay": None,
    }
    return args, tensors


FIRST = sft_step([[1, 2, 3, 4, 5, 6], [7, 8, 9]])
SECOND = sft_step([[10, 11, 12, 13], [14, 15, 16, 17, 18]], prompt=2)


def start(model_dir: str, *flags: str) -> Engine:
    engine = Engine(*flags)
    hello, _ = engine.ok("hello", {"protocol": 1})
    assert hello["engine"] == "torch", hello
    engine.ok("load-model", {"model_dir": model_dir, "device": "cpu", "dtype": "float32", "seed": 0})
    return engine


class ResumeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = tiny_model_dir()
        cls.dirs = scratch_dir("resume")

    def adapter(self, name: str) -> dict:
        return load_file(os.path.join(self.dirs, name, "adapter_model.safetensors"))

    def test_restart_with_adapter_and_optimizer_equals_never_stopping(self):
        checkpoint, straight, resumed, cold = (
            os.path.join(self.dirs, n) for n in ("checkpoint", "straight", "resumed", "cold")
        )
        engine = start(self.model)
        try:
            created, _ = engine.ok("adapter-create", {"lora": LORA, "seed": 5})
            self.assertEqual(created["trainable_parameters"], 2 * (4 * 64 + 64 * 4) + 2 * (4 * 64 + 32 * 4))
            engine.ok("optimizer-reset", OPTIMIZER)
            first, _ = engine.ok("step", *FIRST)
            saved, _ = engine.ok(
                "save",
                {"dir": checkpoint, "optimizer": True, "dtype": "float32", "base_model_name_or_path": "tiny-qwen"},
            )
            self.assertIn("optimizer.safetensors", saved["files"])
            second_straight, _ = engine.ok("step", *SECOND)
            engine.ok(
                "save", {"dir": straight, "optimizer": False, "dtype": "float32", "base_model_name_or_path": None}
            )
            engine.ok("shutdown")
        finally:
            self.assertEqual(engine.close(), 0)
        self.assertEqual(first["optimizer_step"], 1)

        with open(os.path.join(checkpoint, "adapter_config.json")) as file:
            config = json.load(file)
        self.assertEqual(config["base_model_name_or_path"], "tiny-qwen")
        self.assertEqual(
            (config["r"], config["lora_alpha"], sorted(config["target_modules"])), (4, 8, ["q_proj", "v_proj"])
        )
        state = load_file(os.path.join(checkpoint, "optimizer.safetensors"))
        self.assertIn("m.base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", state)
        self.assertEqual(
            tuple(state["v.base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight"].shape), (32, 4)
        )

        for target, load_moments in ((resumed, True), (cold, False)):
            engine = start(self.model)
            try:
                loaded, _ = engine.ok("adapter-load", {"dir": checkpoint})
                self.assertEqual(
                    loaded["lora"], {k: LORA[k] for k in ("r", "alpha", "dropout", "targets", "use_rslora")}
                )
                engine.ok("optimizer-reset", OPTIMIZER)
                if load_moments:
                    self.assertEqual(
                        engine.ok("optimizer-load", {"path": os.path.join(checkpoint, "optimizer.safetensors")})[0],
                        {"step": 1},
                    )
                second, _ = engine.ok("step", *SECOND)
                engine.ok(
                    "save", {"dir": target, "optimizer": False, "dtype": "float32", "base_model_name_or_path": None}
                )
            finally:
                engine.close()
            if load_moments:
                self.assertEqual(second["optimizer_step"], 2)
                self.assertEqual(second["micro_batches"], second_straight["micro_batches"])
                self.assertAlmostEqual(second["grad_norm"], second_straight["grad_norm"], delta=1e-7)

        expected = self.adapter("straight")
        for name, tensor in self.adapter("resumed").items():
            self.assertLess(largest_difference(tensor, expected[name])[0], 1e-7, name)
        # Without the moments the second step differs: the comparison above can fail.
        self.assertGreater(max(largest_difference(t, expected[n])[0] for n, t in self.adapter("cold").items()), 1e-5)

    def test_bfloat16_save_and_a_mismatched_optimizer_state(self):
        engine = start(self.model)
        try:
            engine.ok("adapter-create", {"lora": LORA, "seed": 5})
            engine.ok("optimizer-reset", OPTIMIZER)
            engine.ok("step", *FIRST)
            target = os.path.join(self.dirs, "bf16")
            engine.ok("save", {"dir": target, "optimizer": True, "dtype": "bfloat16", "base_model_name_or_path": None})
            self.assertTrue(
                all(
                    t.dtype == torch.bfloat16
                    for t in load_file(os.path.join(target, "adapter_model.safetensors")).values()
                )
            )
            self.assertTrue(
                all(t.dtype == torch.float32 for t in load_file(os.path.join(target, "optimizer.safetensors")).values())
            )
            engine.ok("optimizer-reset", {**OPTIMIZER, "train_a": False})  # LoRA-FA: the file's A moments do not fit
            header, _, _ = engine.call("optimizer-load", {"path": os.path.join(target, "optimizer.safetensors")})
            self.assertEqual(header["error"]["code"], "engine-bad-request")
            self.assertIn(
                "unexpected ['m.base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight'",
                header["error"]["message"],
            )
        finally:
            engine.close()


class TfjsAdapterTest(unittest.TestCase):
    """An adapter saved by edgerl's TypeScript runtime (model/peft-adapter.ts) loads through PEFT and
    gives the log-probs the tfjs runtime computes with it."""

    SCRIPT = """
(async () => {
  const { loadModel } = await import('./model/policy-model.ts');
  const model = await loadModel(process.env.MODEL_DIR);
  const lora = { r: 4, alpha: 16, targets: ['q_proj', 'v_proj', 'down_proj'], useRslora: true, initLoraWeights: false };
  model.addAdapter('a', lora, { seed: 3 });
  await model.saveAdapter('a', process.env.OUT_DIR);
  const sequences = JSON.parse(process.env.SEQUENCES);
  const withAdapter = await model.logprobs(sequences, { adapter: 'a' });
  const base = await model.logprobs(sequences, { adapter: null });
  process.stdout.write('RESULT' + JSON.stringify({ withAdapter, base }) + '\\n');
})();
"""
    SEQUENCES = [[1, 5, 9, 200, 7, 3, 12, 99], [4, 8, 15], [560, 2]]

    def test_loads_and_scores_like_tfjs(self):
        model = tiny_model_dir()
        out_dir = os.path.join(scratch_dir("tfjs"), "adapter")
        done = subprocess.run(
            [os.path.join(REPO, "node_modules", ".bin", "tsx"), "-e", self.SCRIPT],
            cwd=REPO,
            env={**os.environ, "MODEL_DIR": model, "OUT_DIR": out_dir, "SEQUENCES": json.dumps(self.SEQUENCES)},
            capture_output=True,
            text=True,
            check=True,
        )
        tfjs = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))[6:])
        engine = start(model)
        try:
            loaded, _ = engine.ok("adapter-load", {"dir": out_dir})
            self.assertEqual(
                loaded["lora"],
                {"r": 4, "alpha": 16, "dropout": 0.0, "targets": ["down_proj", "q_proj", "v_proj"], "use_rslora": True},
            )
            for adapter, key in ((True, "withAdapter"), (False, "base")):
                _, out = engine.ok("logprobs", {"adapter": adapter}, flat(self.SEQUENCES))
                expected = torch.tensor([x for row in tfjs[key] for x in row])
                difference, at = largest_difference(out["logprobs"], expected)
                # Two float32 implementations (tfjs's WASM/CPU kernels, torch's): rounding only.
                self.assertLess(difference, 1e-4, f"adapter {adapter}: target {at}")
            self.assertGreater(
                float((torch.tensor(tfjs["withAdapter"][0]) - torch.tensor(tfjs["base"][0])).abs().max()), 1e-3
            )
        finally:
            engine.close()

    WRITE_MOMENTS = """
(async () => {
  const { encodeOptimizerMoments } = await import('./trainer/engine/optimizer-state-file.ts');
  const { writeFile } = await import('node:fs/promises');
  const shapes = JSON.parse(process.env.SHAPES);
  const moments = new Map();
  let k = 0;
  for (const [key, shape] of Object.entries(shapes)) {
    const size = shape[0] * shape[1];
    k += 1;
    const m = Float32Array.from({ length: size }, (_, i) => Math.sin(k + i));
    const v = Float32Array.from({ length: size }, (_, i) => 1 + Math.cos(k * i) ** 2);
    moments.set(key, { shape, m, v });
  }
  await writeFile(process.env.OUT, encodeOptimizerMoments({ step: 3, moments }));
})();
"""
    READ_MOMENTS = """
(async () => {
  const { readOptimizerMoments } = await import('./trainer/engine/optimizer-state-file.ts');
  const state = await readOptimizerMoments(process.env.DIR);
  const chosen = state.moments.get(process.env.KEY);
  const result = { step: state.step, keys: [...state.moments.keys()], m0: Array.from(chosen.m.slice(0, 3)) };
  process.stdout.write('RESULT' + JSON.stringify(result) + '\\n');
})();
"""

    def test_optimizer_state_moves_between_engines(self):
        """A moments file written by the trainer's TypeScript (optimizer-state-file.ts) loads into the
        torch engine's AdamW, and the file the engine writes back reads in TypeScript as the same."""
        model = tiny_model_dir()
        directory = scratch_dir("moments")
        engine = start(model)
        try:
            engine.ok("adapter-create", {"lora": {**LORA, "targets": ["q_proj", "v_proj"]}, "seed": 1})
            engine.ok("optimizer-reset", {**OPTIMIZER, "train_a": False})
            engine.ok(
                "save", {"dir": directory, "optimizer": True, "dtype": "float32", "base_model_name_or_path": None}
            )
            shapes = {
                k[2:]: list(t.shape)
                for k, t in load_file(os.path.join(directory, "optimizer.safetensors")).items()
                if k.startswith("m.")
            }
            self.assertEqual(len(shapes), 4)  # LoRA-FA: the four B matrices only
            written = os.path.join(directory, "from-typescript.safetensors")
            tsx = os.path.join(REPO, "node_modules", ".bin", "tsx")
            env = {**os.environ, "SHAPES": json.dumps(shapes), "OUT": written}
            subprocess.run([tsx, "-e", self.WRITE_MOMENTS], cwd=REPO, env=env, check=True, capture_output=True)
            self.assertEqual(engine.ok("optimizer-load", {"path": written})[0], {"step": 3})
            back = os.path.join(directory, "back")
            engine.ok("save", {"dir": back, "optimizer": True, "dtype": "float32", "base_model_name_or_path": None})
        finally:
            engine.close()
        ours, theirs = load_file(os.path.join(back, "optimizer.safetensors")), load_file(written)
        self.assertEqual(ours.keys(), theirs.keys())
        for name in ours:
            self.assertTrue(torch.equal(ours[name], theirs[name]), name)
        key = sorted(shapes)[-1]
        env = {**os.environ, "DIR": back, "KEY": key}
        done = subprocess.run(
            [tsx, "-e", self.READ_MOMENTS], cwd=REPO, env=env, check=True, capture_output=True, text=True
        )
        read = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))[6:])
        self.assertEqual((read["step"], sorted(read["keys"])), (3, sorted(shapes)))
        self.assertLess(largest_difference(torch.tensor(read["m0"]), ours[f"m.{key}"].reshape(-1)[:3])[0], 1e-7)


class ErrorRepliesTest(unittest.TestCase):
    def test_failures_are_replies_and_the_engine_keeps_serving(self):
        engine = Engine()
        try:

            def error(op, args=None, tensors=None):
                header, _, _ = engine.call(op, args, tensors)
                self.assertFalse(header["ok"], op)
                return header["error"]["code"], header["error"]["message"]

            self.assertEqual(error("fly")[0], "engine-bad-request")
            self.assertEqual(error("logprobs", {"adapter": False}, flat([[1, 2, 3]]))[0], "engine-state")
            self.assertEqual(error("optimizer-reset", OPTIMIZER)[0], "engine-state")
            code, message = error("load-model", {"model_dir": "/nonexistent/model"})
            self.assertEqual(code, "engine-bad-request")
            self.assertIn("/nonexistent/model", message)
            code, message = error("load-model", {"device": "cpu"})
            self.assertEqual((code, message), ("engine-bad-request", "load-model.model_dir is required"))
            engine.ok("load-model", {"model_dir": tiny_model_dir()})
            tensors = flat([[1, 2, 3], [4, 5]])
            tensors["ids"] = tensors["ids"][:-1]  # 4 ids for lengths 3 + 2
            code, message = error("logprobs", {"adapter": False}, tensors)
            self.assertEqual(code, "engine-bad-request")
            self.assertIn('tensor "ids" must have 5 entries', message)
            tensors = flat([[1, 2, 3]])
            tensors["lengths"] = tensors["lengths"].float()
            self.assertIn('"lengths" must be int32', error("logprobs", {"adapter": False}, tensors)[1])
            self.assertEqual(error("logprobs", {"adapter": True}, flat([[1, 2, 3]]))[0], "engine-state")
            self.assertEqual(error("step", *FIRST)[0], "engine-state")
            # A header that is not JSON, then a tensor table that lies about the payload.
            engine.send_raw(b"\x05\x00\x00\x00\x00\x00\x00\x00{oops")
            header, _ = engine.read()
            self.assertEqual((header["id"], header["error"]["code"]), (None, "engine-bad-request"))
            raw = json.dumps(
                {
                    "id": 99,
                    "op": "logprobs",
                    "args": {"adapter": False},
                    "tensors": {"ids": {"dtype": "int32", "shape": [4], "offset": 4}},
                }
            ).encode()
            engine.send_raw(len(raw).to_bytes(4, "little") + (8).to_bytes(4, "little") + raw + bytes(8))
            header, _ = engine.read()
            self.assertEqual((header["id"], header["error"]["code"]), (99, "engine-bad-request"))
            _, out = engine.ok("logprobs", {"adapter": False}, flat([[1, 2, 3]]))
            self.assertEqual(out["logprobs"].shape, (2,))
            engine.ok("shutdown")
            self.assertEqual(engine.process.wait(timeout=30), 0)
            self.assertEqual(engine.process.stdout.read(), b"", "nothing but frames on stdout")
        finally:
            engine.close()

    def test_end_of_input_inside_a_frame_exits_1(self):
        engine = Engine()
        try:
            engine.send_raw(b"\x40\x00\x00\x00\x00\x00\x00\x00{")
            engine.process.stdin.close()
            self.assertEqual(engine.process.wait(timeout=60), 1)
        finally:
            engine.close()


def alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def children(pid: int) -> list[int]:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as file:
            out.extend(int(p) for p in file.read().split())
    return out


@unittest.skipUnless(sys.platform.startswith("linux"), "PR_SET_PDEATHSIG is Linux's")
class ParentDeathTest(unittest.TestCase):
    def test_engine_dies_with_its_parent(self):
        for flags in ("", "--processes 2"):
            with self.subTest(flags=flags or "one process"):
                self.parent_dies(flags)

    def parent_dies(self, flags: str):
        # The parent shell starts the engine and waits; the engine's stdin is this test's pipe, which
        # stays open, so only the parent's death (not end of input) can end the engine.
        parent = subprocess.Popen(
            # Non-interactive bash gives `&` jobs /dev/null as stdin unless redirected explicitly: <&3.
            ["bash", "-c", f'exec 3<&0; "{sys.executable}" -m edgerl_torch {flags} <&3 & echo $! >&2; wait'],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=engine_env(),
        )
        engine = int(parent.stderr.readline())
        client = Engine.attach(parent)
        self.assertEqual(client.ok("hello", {"protocol": 1})[0]["world_size"], 2 if flags else 1)
        ranks = [engine, *children(engine)]
        self.assertEqual(len(ranks), 2 if flags else 1)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in ranks) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in ranks if alive(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        parent.stdin.close()
        parent.stdout.close()
        parent.stderr.close()
        client.log.close()
        self.assertEqual(left, [], "engine processes outlived their parent")


if __name__ == "__main__":
    unittest.main()
