// The model runtime's correctness checks on the webgpu backend, with the tolerances the wasm/cpu tests
// use: logits against the fixtures' references (test/fixtures/model/: float64 PyTorch, transformers for
// qwen3) and against wasm in the same run, greedy KV-cached decoding (generate and DecodeBatch),
// cached sampling against a full pass, the adapter gradient against wasm, and one optimizer step.
// Every read is async: dataSync throws on this backend, so these passing also shows the paths read
// nothing synchronously.
//
// Runs only when EDGERL_TEST_WEBGPU names the backend to test (`webgpu` on a GPU box,
// `webgpu:software` over lavapipe in CI: scripts/setup-software-vulkan.sh): it needs a Vulkan driver.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from './backend.ts';
import { DecodeBatch } from './decode-batch.ts';
import { projections } from './hf-config.ts';
import { loadModel, type PolicyModel } from './policy-model.ts';
import { decodeSafetensors } from './safetensors.ts';
import { fixtureDir, useBackend } from '../test/support/model-fixtures.ts';
import { maxAbsDiff } from '../test/support/max-difference.ts';
import { generate } from '../test/support/generate.ts';

const requested = process.env.EDGERL_TEST_WEBGPU?.trim() || undefined;
if (requested !== undefined && requested !== 'webgpu' && requested !== 'webgpu:software') {
  throw new Error(`EDGERL_TEST_WEBGPU must be webgpu or webgpu:software, got "${requested}"`);
}

/** As decoder.test.ts: float32 against float64 through two layers. */
const logitTolerance = 1e-4;
/** As lora.test.ts: largest gradient difference relative to the largest gradient. */
const gradientTolerance = 1e-4;
const architectures = ['qwen2', 'llama', 'qwen3'] as const;
const ids = [
  [5, 17, 42, 99, 3, 64, 120, 7],
  [1, 2, 77, 8, 127, 31, 12, 90],
];

interface Reference {
  ids: number[][];
  greedy_prompt: number[];
  greedy: number[];
  greedy_adapter: number[];
}

interface HostResults {
  logits: Float32Array;
  logitsAdapter: Float32Array;
  /** Gradient of Σ forwardLogprobs into a fresh all-projection adapter, in variable order. */
  gradients: Float32Array[];
}

async function open(name: string): Promise<PolicyModel> {
  const model = await loadModel(fixtureDir(name));
  await model.loadAdapter('fixture', join(fixtureDir(name), 'adapter'));
  model.addAdapter(
    'train',
    { r: 4, alpha: 8, targets: [...projections], initLoraWeights: false },
    { seed: 5 },
  );
  return model;
}

async function hostResults(model: PolicyModel, reference: Reference): Promise<HostResults> {
  const read = async (tensor: tf.Tensor) => {
    const values = (await tensor.data()) as Float32Array;
    tensor.dispose();
    return values;
  };
  const logits = await read(model.forwardLogits(reference.ids));
  const logitsAdapter = await read(model.forwardLogits(reference.ids, { adapter: 'fixture' }));
  const variables = model.trainableVariables('train');
  const { value, grads } = tf.variableGrads(
    () => tf.sum(model.forwardLogprobs(ids, { adapter: 'train' })) as tf.Scalar,
    variables,
  );
  value.dispose();
  const gradients = await Promise.all(variables.map((v) => read(grads[v.name] as tf.Tensor)));
  return { logits, logitsAdapter, gradients };
}

function relativeDiff(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let worst = 0;
  a.forEach((values, index) => {
    const other = b[index] as Float32Array;
    const scale = Math.max(...Array.from(other, Math.abs));
    worst = Math.max(worst, maxAbsDiff(values, other) / scale);
  });
  return worst;
}

// Needs a Vulkan driver and the optional webgpu packages; CI runs it over lavapipe (see the header).
describe.skipIf(requested === undefined)(`model runtime on ${requested ?? 'webgpu'}`, () => {
  const references = new Map<string, { reference: Reference; logits: Map<string, Float32Array> }>();
  const onWasm = new Map<string, HostResults>();
  const models = new Map<string, PolicyModel>();
  const lines: string[] = [];

  beforeAll(async () => {
    for (const name of architectures) {
      const dir = fixtureDir(name);
      const tensors = decodeSafetensors(readFileSync(join(dir, 'reference.safetensors'))).tensors;
      references.set(name, {
        reference: JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')) as Reference,
        logits: new Map([...tensors].map(([key, tensor]) => [key, Float32Array.from(tensor.data)])),
      });
    }
    // The wasm results first: tensors cannot follow a switch away from webgpu (that read would be sync).
    await useBackend('wasm');
    for (const name of architectures) {
      const model = await open(name);
      onWasm.set(name, await hostResults(model, references.get(name)?.reference as Reference));
      model.dispose();
    }
    if (requested === 'webgpu:software') {
      // CI's only adapter is lavapipe: plain `webgpu` must refuse it, naming it and the way to opt in.
      await expect(selectBackend({ requested: 'webgpu', log: () => {} })).rejects.toThrow(
        /backend "webgpu" is not available: only a software adapter is available \(.+\[.*software \(.+\), binding ≤ .+\]\), used only when requested as webgpu:software/,
      );
      expect(tf.getBackend()).toBe('wasm');
    }
    await selectBackend({ requested, log: (line) => lines.push(line) });
    for (const name of architectures) models.set(name, await open(name));
  });
  afterAll(() => {
    for (const model of models.values()) model.dispose();
  });

  it('runs on webgpu and prints the adapter it chose', () => {
    expect(tf.getBackend()).toBe('webgpu');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^edgerl: tfjs backend webgpu(:software)? on .+ \[.*(hardware|software \(.+\)), binding ≤ .+\] \(requested\)$/,
    );
    console.log(lines[0]);
  });

  it('has no synchronous read of a GPU result (so nothing below can have used one)', async () => {
    const product = tf.matMul(tf.ones([8, 8]), tf.ones([8, 8]));
    expect(() => product.dataSync()).toThrow(/OffscreenCanvas/);
    expect((await product.data())[0]).toBe(8); // Σ_k 1·1 over k < 8
    product.dispose();
  });

  it('sums more tensors than one shader can bind (the trainer’s gradient norm adds one per adapter tensor)', async () => {
    // 40 inputs > 15 storage bindings: Σ_{i<40} i = 40·39/2 = 780 in every element. Inputs are
    // results of GPU kernels, so the sum really runs on the device.
    const terms = Array.from({ length: 40 }, (_, i) => tf.add(tf.fill([2048], i), 0));
    const total = tf.addN(terms);
    const values = await total.data();
    expect(Math.min(...values)).toBe(780);
    expect(Math.max(...values)).toBe(780);
    tf.dispose([...terms, total]);
  });

  for (const name of architectures) {
    describe(name, () => {
      const model = () => models.get(name) as PolicyModel;
      const fixture = () =>
        references.get(name) as { reference: Reference; logits: Map<string, Float32Array> };

      it(`matches the PyTorch reference logits and wasm's within ${logitTolerance}`, async () => {
        const { reference, logits } = fixture();
        const wasm = onWasm.get(name) as HostResults;
        const here = await hostResults(model(), reference);
        for (const [key, values, onWasmValues] of [
          ['logits', here.logits, wasm.logits],
          ['logits_adapter', here.logitsAdapter, wasm.logitsAdapter],
        ] as const) {
          const vsTorch = maxAbsDiff(values, logits.get(key) as Float32Array);
          const vsWasm = maxAbsDiff(values, onWasmValues);
          console.log(
            `${name}/webgpu ${key}: max |Δ| vs PyTorch ${vsTorch.toExponential(2)}, vs wasm ${vsWasm.toExponential(2)}`,
          );
          expect(vsTorch, `${key} vs PyTorch`).toBeLessThan(logitTolerance);
          expect(vsWasm, `${key} vs wasm`).toBeLessThan(logitTolerance);
        }
        const gradient = relativeDiff(here.gradients, wasm.gradients);
        console.log(
          `${name}/webgpu adapter gradient: largest relative |Δ| vs wasm ${gradient.toExponential(2)}`,
        );
        expect(gradient).toBeLessThan(gradientTolerance);
        // Every adapter tensor gets a gradient, or the comparison would prove little.
        for (const values of here.gradients)
          expect(Math.max(...Array.from(values, Math.abs))).toBeGreaterThan(0);
      });

      it('decodes greedily with the KV cache as the reference does (generate and DecodeBatch)', async () => {
        const { reference } = fixture();
        const options = { temperature: 0, maxTokens: reference.greedy.length, stopTokenIds: [] };
        const [base] = await generate(model(), [reference.greedy_prompt], options);
        const [adapted] = await generate(model(), [reference.greedy_prompt], {
          ...options,
          adapter: 'fixture',
        });
        expect(base?.tokenIds).toEqual(reference.greedy);
        expect(adapted?.tokenIds).toEqual(reference.greedy_adapter);

        const vocab = model().config.vocabSize;
        const argmax = (values: Float32Array, row: number) => {
          const slice = values.subarray(row * vocab, (row + 1) * vocab);
          return slice.indexOf(Math.max(...slice));
        };
        const batch = new DecodeBatch(model().decoder);
        let logits = await batch.add([
          { prompt: reference.greedy_prompt, adapter: null },
          { prompt: reference.greedy_prompt, adapter: model().adapter('fixture') },
        ]);
        const out: number[][] = [[], []];
        for (let step = 0; step < reference.greedy.length; step++) {
          const next = [argmax(logits, 0), argmax(logits, 1)];
          out[0]?.push(next[0] as number);
          out[1]?.push(next[1] as number);
          if (step < reference.greedy.length - 1) logits = await batch.step(next);
        }
        batch.dispose();
        expect(out).toEqual([reference.greedy, reference.greedy_adapter]);
      });

      it('samples with the cache and left padding the logprobs a full pass gives', async () => {
        const prompts = [
          [5, 17, 42, 99, 3],
          [1, 2, 77],
        ];
        const generations = await generate(model(), prompts, {
          temperature: 1,
          topP: 0.9,
          maxTokens: 6,
          seed: 7,
          stopTokenIds: [],
          adapter: ['fixture', null],
        });
        for (const [row, generation] of generations.entries()) {
          const prompt = prompts[row] as number[];
          const [full] = await model().logprobs([[...prompt, ...generation.tokenIds]], {
            adapter: row === 0 ? 'fixture' : null,
          });
          const diff = maxAbsDiff(generation.logprobs, (full as number[]).slice(prompt.length - 1));
          expect(diff, `row ${row} max |Δ|`).toBeLessThan(logitTolerance);
        }
      });

      it('one optimizer step moves every adapter tensor and no base tensor, leaking no tensor', async () => {
        const snapshot = (tensors: readonly tf.Tensor[]) =>
          Promise.all(tensors.map(async (t) => Float32Array.from(await t.data())));
        const variables = model().trainableVariables('train');
        const baseBefore = await snapshot(model().baseTensors());
        const before = await snapshot(variables);
        const optimizer = tf.train.adam(1e-3);
        const loss = () => tf.neg(tf.mean(model().forwardLogprobs(ids, { adapter: 'train' }))) as tf.Scalar;
        optimizer.minimize(loss, true, variables)?.dispose(); // first step creates the moments
        const tensors = tf.memory().numTensors;
        optimizer.minimize(loss, true, variables)?.dispose();
        expect(tf.memory().numTensors).toBe(tensors);
        const after = await snapshot(variables);
        expect(after.filter((values, i) => maxAbsDiff(values, before[i] as Float32Array) === 0)).toEqual([]);
        const baseAfter = await snapshot(model().baseTensors());
        expect(baseAfter.every((values, i) => maxAbsDiff(values, baseBefore[i] as Float32Array) === 0)).toBe(
          true,
        );
        optimizer.dispose();
      });
    });
  }
});
