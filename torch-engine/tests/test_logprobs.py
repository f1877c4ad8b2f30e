# Chunked log-probs (edgerl_torch/logprobs.py) against an independent computation: each sequence alone,
# unpadded, through PEFT's own forward to full logits, then log_softmax; values and adapter gradients,
# at several chunk sizes. Also ops `logprobs` and `predict` on the flat layout.
import unittest

import torch

from edgerl_torch.args import Args
from edgerl_torch.batch import pad
from edgerl_torch.logprobs import final_hidden, target_logprobs
from edgerl_torch.tensors import FlatBatch, flat_batch
from tests.support import flat, in_process, largest_difference, randomise_b, tiny_model_dir, views

SEQUENCES = [[1, 5, 9, 200, 7, 3, 44, 12], [4, 8, 15], [300, 2], [9]]
LORA = {"r": 4, "alpha": 8, "targets": ["q_proj", "v_proj", "up_proj"]}


def reference_logprobs(peft, sequence: list[int]) -> torch.Tensor:
    """[T − 1] log p(ids[t + 1] | ids[≤ t]) from the model's full logits, no padding, no chunks."""
    ids = torch.tensor([sequence])  # [1, T]
    logits = peft(input_ids=ids).logits[0, :-1].float()  # [T − 1, V]
    return logits.log_softmax(-1).gather(1, ids[0, 1:, None]).squeeze(1)  # [T − 1]


class LogprobsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = in_process(tiny_model_dir(), lora=LORA)
        randomise_b(cls.server.session.peft)
        cls.loaded = cls.server.session.loaded
        cls.batch = flat_batch(views(flat(SEQUENCES)), cls.loaded.vocab_size)

    def ours(self, members, chunk, target_mask=None):
        padded = pad(self.batch, members, pad_token_id=0)
        if target_mask is not None:
            padded = padded.__class__(padded.ids, padded.attention_mask, padded.position_ids, target_mask, 0, 0)
        self.loaded.logprob_chunk_tokens = chunk
        return padded, target_logprobs(
            self.loaded.causal_lm, final_hidden(self.loaded.causal_lm, padded), padded, chunk
        )

    def test_values_equal_full_logits_at_every_chunk_size(self):
        peft = self.server.session.peft
        members = [0, 1, 2, 3]
        with torch.no_grad():
            expected = [reference_logprobs(peft, SEQUENCES[i]) if len(SEQUENCES[i]) > 1 else None for i in members]
            for chunk in (1, 3, 7, 4096):
                _, out = self.ours(members, chunk)  # [B, T − 1]
                self.assertEqual(out.dtype, torch.float32)
                for row, index in enumerate(members):
                    n = len(SEQUENCES[index]) - 1
                    if n > 0:
                        difference, at = largest_difference(out[row, :n], expected[row])
                        self.assertLess(difference, 1e-5, f"chunk {chunk}, sequence {index}, target {at}")
                    self.assertTrue(torch.all(out[row, n:] == 0), "padding targets are 0")

    def test_only_masked_positions_are_computed(self):
        mask = torch.zeros((2, 7), dtype=torch.bool)
        mask[0, [1, 4, 6]] = True
        mask[1, 0] = True
        with torch.no_grad():
            _, out = self.ours([0, 1], 2, mask)
            full = reference_logprobs(self.server.session.peft, SEQUENCES[0])
        self.assertLess(largest_difference(out[0, [1, 4, 6]], full[[1, 4, 6]])[0], 1e-5)
        self.assertTrue(torch.all(out[~mask] == 0))

    def test_gradients_equal_full_logits_gradients(self):
        peft = self.server.session.peft
        parameters = [p for name, p in peft.named_parameters() if ".lora_" in name]
        weights = torch.linspace(-1, 1, 7)  # a loss that weighs every target differently

        def grads(loss):
            for p in parameters:
                p.grad = None
            loss.backward()
            return [p.grad.clone() for p in parameters]

        expected = grads(
            sum((reference_logprobs(peft, SEQUENCES[i]) * weights[: len(SEQUENCES[i]) - 1]).sum() for i in (0, 1))
        )
        for chunk in (1, 4, 4096):
            _, out = self.ours([0, 1], chunk)
            got = grads((out * weights).sum())
            for g, e in zip(got, expected, strict=True):
                scale = float(e.abs().max()) + 1e-12
                self.assertLess(largest_difference(g, e)[0] / scale, 1e-5, f"chunk {chunk}")
        for p in parameters:
            p.grad = None

    def test_logprobs_op_is_flat_and_switches_the_adapter(self):
        peft = self.server.session.peft
        for adapter in (True, False):
            _, out = self.server.logprobs(Args({"adapter": adapter}, "logprobs"), views(flat(SEQUENCES)), None)
            with torch.no_grad(), self.server.session.adapter_context(adapter):
                expected = torch.cat([reference_logprobs(peft, s) for s in SEQUENCES if len(s) > 1])
            self.assertEqual(out["logprobs"].shape, (sum(len(s) - 1 for s in SEQUENCES),))
            self.assertLess(largest_difference(out["logprobs"], expected)[0], 1e-5, f"adapter {adapter}")
        with torch.no_grad():
            on = reference_logprobs(peft, SEQUENCES[0])
            with peft.disable_adapter():
                off = reference_logprobs(peft, SEQUENCES[0])
        self.assertGreater(float((on - off).abs().max()), 1e-3, "the randomised adapter changes the outputs")

    def test_predict_matches_full_logits(self):
        rows = torch.tensor([0, 0, 1, 3, 2], dtype=torch.int32)
        positions = torch.tensor([7, 2, 0, 0, 1], dtype=torch.int32)
        tokens = torch.tensor([5, 9, 8, 1, 500], dtype=torch.int32)
        tensors = {**flat(SEQUENCES), "rows": rows, "positions": positions, "tokens": tokens}
        _, out = self.server.predict(Args({"adapter": True}, "predict"), views(tensors), None)
        with torch.no_grad():
            for k in range(5):
                sequence = SEQUENCES[int(rows[k])]
                logits = self.server.session.peft(input_ids=torch.tensor([sequence])).logits[
                    0, int(positions[k])
                ]  # [V]
                self.assertEqual(int(out["argmax"][k]), int(logits.argmax()))
                expected = float(logits.float().log_softmax(-1)[int(tokens[k])])
                self.assertAlmostEqual(float(out["logprobs"][k]), expected, delta=1e-5)


class LlamaTest(unittest.TestCase):
    def test_llama_directory_scores_like_its_full_logits(self):
        server = in_process(tiny_model_dir("llama"), lora={**LORA, "targets": ["k_proj", "o_proj", "gate_proj"]})
        self.assertEqual(server.session.loaded.info["architecture"], "LlamaForCausalLM")
        randomise_b(server.session.peft)
        _, out = server.logprobs(Args({"adapter": True}, "logprobs"), views(flat(SEQUENCES[:2])), None)
        with torch.no_grad():
            expected = torch.cat([reference_logprobs(server.session.peft, s) for s in SEQUENCES[:2]])
        self.assertLess(largest_difference(out["logprobs"], expected)[0], 1e-5)


class Bfloat16Test(unittest.TestCase):
    def test_bfloat16_model_gives_float32_logprobs_of_its_own_logits(self):
        server = in_process(tiny_model_dir(), load={"dtype": "bfloat16"})
        loaded = server.session.loaded
        self.assertEqual(loaded.info["dtype"], "bfloat16")
        sequence = SEQUENCES[0]
        _, out = server.logprobs(Args({"adapter": False}, "logprobs"), views(flat([sequence])), None)
        with torch.no_grad():
            ids = torch.tensor([sequence])
            logits = loaded.causal_lm(input_ids=ids).logits[0, :-1]  # [T − 1, V] bf16
            expected = logits.float().log_softmax(-1).gather(1, ids[0, 1:, None]).squeeze(1)  # [T − 1]
            in_bf16 = logits.log_softmax(-1).gather(1, ids[0, 1:, None]).squeeze(1).float()  # [T − 1]
        self.assertEqual(out["logprobs"].dtype, torch.float32)
        self.assertLess(largest_difference(out["logprobs"], expected)[0], 1e-5)
        # The float32 logsumexp is not the bf16 one (which rounds to bf16's 8-bit mantissa).
        self.assertGreater(largest_difference(out["logprobs"], in_bf16)[0], 1e-4)


class FlatBatchTest(unittest.TestCase):
    def test_targets_of_each_sequence(self):
        tensors = {**flat([[1, 2, 3], [4], [5, 6]]), "mask": torch.tensor([1, 0, 1], dtype=torch.uint8)}
        batch = flat_batch(views(tensors), 10, target_specs=(("mask", "uint8", False),))
        self.assertIsInstance(batch, FlatBatch)
        self.assertEqual(batch.target_slice("mask", 0).tolist(), [1, 0])
        self.assertEqual(batch.target_slice("mask", 1).tolist(), [])
        self.assertEqual(batch.target_slice("mask", 2).tolist(), [1])
        self.assertEqual(batch.sequence_ids(2).tolist(), [5, 6])


if __name__ == "__main__":
    unittest.main()
