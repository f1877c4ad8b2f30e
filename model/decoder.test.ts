// Forward-pass parity on both CPU backends with an independent float64 PyTorch implementation
// (test/fixtures/model/make_reference.py: qwen2, llama) and with transformers + PEFT themselves in
// float32 (make_transformers_reference.py: qwen3); how the fixtures were made is in that folder's README.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Projection } from './hf-config.ts';
import { peftTensorName } from './peft-adapter.ts';
import { loadModel, type PolicyModel } from './policy-model.ts';
import { decodeSafetensors } from './safetensors.ts';
import { fixtureDir, useBackend } from '../test/support/model-fixtures.ts';
import { maxAbsDiff } from '../test/support/max-difference.ts';
import { generate } from '../test/support/generate.ts';

/** float32 against float64 (qwen2, llama) or transformers' float32 (qwen3, itself within 1.4e-6 of
 * float64) through two layers: observed ≤ 3e-6 on logits of magnitude ≤ 4.5. */
const logitTolerance = 1e-4;

/** What each fixture's reference.safetensors was computed with. */
const referenceKind = {
  qwen2: 'PyTorch float64',
  llama: 'PyTorch float64',
  qwen3: 'transformers float32',
} as const;

interface Reference {
  ids: number[][];
  greedy_prompt: number[];
  greedy: number[];
  greedy_min_gap: number;
  greedy_adapter: number[];
  greedy_adapter_min_gap: number;
}

for (const backend of ['wasm', 'cpu'] as const) {
  for (const name of ['qwen2', 'llama', 'qwen3'] as const) {
    describe(`${name} on ${backend}`, () => {
      const dir = fixtureDir(name);
      const reference = JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')) as Reference;
      const logits = decodeSafetensors(readFileSync(join(dir, 'reference.safetensors'))).tensors;
      let model: PolicyModel;

      beforeAll(async () => {
        await useBackend(backend);
        model = await loadModel(dir);
        await model.loadAdapter('fixture', join(dir, 'adapter'));
      });
      afterAll(() => model.dispose());

      it('matches the reference logits, without and with the PEFT adapter', async () => {
        for (const [key, adapter] of [
          ['logits', null],
          ['logits_adapter', 'fixture'],
        ] as const) {
          const out = model.forwardLogits(reference.ids, { adapter });
          expect(out.shape).toEqual([2, 7, 128]);
          const diff = maxAbsDiff(await out.data(), logits.get(key)?.data ?? []);
          out.dispose();
          console.log(
            `${name}/${backend} ${key}: largest |Δ| vs ${referenceKind[name]} = ${diff.toExponential(2)}`,
          );
          expect(diff, `${key} max |Δ|`).toBeLessThan(logitTolerance);
        }
        // The adapter must matter, or the second comparison proves nothing.
        expect(
          maxAbsDiff(logits.get('logits')?.data ?? [], logits.get('logits_adapter')?.data ?? []),
        ).toBeGreaterThan(0.5);
      });

      it.runIf(name === 'qwen3')(
        "gives the adapter PEFT's gradients of the mean next-token NLL (autograd through the q/k norms)",
        async () => {
          const variables = model.trainableVariables('fixture');
          const loss = () => tf.neg(tf.mean(model.forwardLogprobs(reference.ids, { adapter: 'fixture' })));
          const { value, grads } = tf.variableGrads(loss as () => tf.Scalar, variables);
          let worst = 0;
          let largest = 0;
          for (const variable of variables) {
            const match = /layers\.(\d+)\.(\w+)\.lora_(A|B)$/.exec(variable.name);
            expect(match, variable.name).not.toBeNull();
            const [, layer, projection, which] = match as unknown as [string, string, Projection, 'A' | 'B'];
            const want = logits.get(`grad.${peftTensorName(Number(layer), projection, which)}`);
            expect(want, `${variable.name} has a reference`).toBeDefined();
            // The runtime keeps Aᵀ [in, r] and Bᵀ [r, out]; PEFT's A is [r, in], B [out, r].
            const mine = tf.transpose(grads[variable.name] as tf.Tensor2D);
            expect(mine.shape).toEqual(want?.shape);
            worst = Math.max(worst, maxAbsDiff(await mine.data(), want?.data ?? []));
            largest = Math.max(largest, ...(want?.data ?? []).map(Math.abs));
            mine.dispose();
          }
          tf.dispose([value, ...Object.values(grads)]);
          expect(variables).toHaveLength(2 * 7 * 2); // A and B, 7 projections, 2 layers
          console.log(
            `qwen3/${backend} adapter gradients: largest |Δ| ${worst.toExponential(2)} of ${largest.toFixed(3)}`,
          );
          expect(worst).toBeLessThan(1e-5 * Math.max(1, largest));
        },
      );

      it('greedy decoding with the KV cache reproduces the reference (recomputed from scratch each step)', async () => {
        // The reference's smallest top-2 logit gap dwarfs the float32 error, so argmax must agree.
        expect(Math.min(reference.greedy_min_gap, reference.greedy_adapter_min_gap)).toBeGreaterThan(
          100 * logitTolerance,
        );
        const options = { temperature: 0, maxTokens: reference.greedy.length, stopTokenIds: [] };
        const [base] = await generate(model, [reference.greedy_prompt], options);
        const [adapted] = await generate(model, [reference.greedy_prompt], {
          ...options,
          adapter: 'fixture',
        });
        expect(base?.tokenIds).toEqual(reference.greedy);
        expect(adapted?.tokenIds).toEqual(reference.greedy_adapter);
        expect(base?.finishReason).toBe('length');
      });

      it('cached decoding equals the full forward pass, with left padding in the batch', async () => {
        // Two prompts of different lengths in one batch (the shorter one left-padded).
        const prompts = [
          [5, 17, 42, 99, 3],
          [1, 2, 77],
        ];
        const generations = await generate(model, prompts, {
          temperature: 1,
          topP: 0.9,
          maxTokens: 6,
          seed: 7,
          stopTokenIds: [],
        });
        for (const [row, generation] of generations.entries()) {
          const full = [...(prompts[row] as number[]), ...generation.tokenIds];
          // Full (uncached, unpadded) forward pass over prompt + generated tokens.
          const [logprobs] = await model.logprobs([full]);
          const fromFull = (logprobs as number[]).slice((prompts[row] as number[]).length - 1);
          const diff = maxAbsDiff(generation.logprobs, fromFull);
          expect(diff, `row ${row}: sampled-token logprobs vs full pass, max |Δ|`).toBeLessThan(1e-4);
        }
      });

      it('pads without changing results: a right-padded or left-padded row equals the row alone', async () => {
        const alone = model.forwardLogits([[9, 8, 7]]);
        const right = model.forwardLogits([[9, 8, 7, 0, 0]], { attentionMask: [[1, 1, 1, 0, 0]] });
        const left = model.forwardLogits([[0, 0, 9, 8, 7]], { attentionMask: [[0, 0, 1, 1, 1]] });
        const want = await alone.data();
        const rightValid = (await right.data()).subarray(0, 3 * 128); // positions 0..2 of [1, 5, 128]
        const leftValid = (await left.data()).subarray(2 * 128); // positions 2..4
        expect(maxAbsDiff(rightValid, want)).toBeLessThan(1e-5);
        expect(maxAbsDiff(leftValid, want)).toBeLessThan(1e-5);
        tf.dispose([alone, right, left]);
      });

      it('logprobs are log-softmax of the logits at the next token', async () => {
        const ids = reference.ids;
        const rows = await model.logprobs(ids);
        const all = logits.get('logits')?.data as Float32Array;
        // Hand check on row 1, position 3: log p(ids[1][4] | ids[1][≤3]) from the reference logits.
        const offset = (7 + 3) * 128;
        const slice = all.subarray(offset, offset + 128);
        const max = Math.max(...slice);
        const lse = max + Math.log(slice.reduce((s, v) => s + Math.exp(v - max), 0));
        expect(rows?.[1]?.[3]).toBeCloseTo((slice[ids[1]?.[4] as number] as number) - lse, 4);
      });

      it('with a target mask, gives the same logprobs where it is set and 0 elsewhere', async () => {
        const ids = reference.ids;
        const all = await model.forwardLogprobs(ids, { adapter: 'fixture' }).array();
        const targetMask = ids.map((row, r) => row.slice(1).map((_, t) => ((r + t) % 3 === 0 ? 1 : 0)));
        const some = await model.forwardLogprobs(ids, { adapter: 'fixture', targetMask }).array();
        const want = all.map((row, r) => row.map((v, t) => (targetMask[r]?.[t] ? v : 0)));
        expect(maxAbsDiff(some.flat(), want.flat())).toBeLessThan(1e-5);
        expect(() => model.forwardLogprobs(ids, { targetMask: [[1]] })).toThrow(/targetMask must be 2 rows/);
      });
    });
  }
}
