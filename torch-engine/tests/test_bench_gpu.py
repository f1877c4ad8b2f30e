# The GPU bench script (edgerl_torch.bench_gpu) run on the CPU at the tiny shape, so the script a GPU
# session runs in one shot cannot rot: it builds the model from its config, trains through the engine's
# own ops, and writes every figure it prints.
import json
import os
import unittest

from tests.support import scratch_dir


class BenchGpuSmoke(unittest.TestCase):
    def test_tiny_on_cpu_writes_its_figures(self):
        from edgerl_torch.bench_gpu import main

        out = os.path.join(scratch_dir("bench-gpu"), "bench.json")
        report = main(
            ["--shapes", "tiny", "--device", "cpu", "--dtype", "float32", "--sequences", "2",
             "--positions", "32", "--micro-batch-tokens", "32", "--steps", "1", "--out", out]
        )
        with open(out) as handle:
            written = json.load(handle)
        self.assertEqual(written, json.loads(json.dumps(report)))
        [shape] = written["shapes"]
        self.assertEqual(shape["shape"], "tiny")
        self.assertEqual(shape["micro_batches"], 2)
        for key in ("seconds_per_step", "trained_tokens_per_second", "achieved_tflops", "peak_memory_bytes"):
            self.assertGreater(shape[key], 0, key)
        self.assertGreater(written["matmul_ceiling_tflops"], 0)


if __name__ == "__main__":
    unittest.main()
