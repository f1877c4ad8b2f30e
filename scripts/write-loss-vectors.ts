// Writes test/fixtures/grpo/loss-vectors.json: the GRPO/SFT loss test vectors of trainer/grpo/loss-vectors.ts
// (computed from objective-loss.ts on tfjs's cpu backend). Run after changing any loss definition
// (`npx tsx scripts/write-loss-vectors.ts`); trainer/grpo/loss-vectors.test.ts fails until the file matches,
// and torch-engine/tests/test_losses.py then shows whether the PyTorch engine's copy still agrees.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { formatLossVectors, generateLossVectors } from '../trainer/grpo/loss-vectors.ts';

const target = join(resolve(import.meta.dirname, '..'), 'test', 'fixtures', 'grpo', 'loss-vectors.json');

await tf.setBackend('cpu');
const vectors = await generateLossVectors();
const text = formatLossVectors(vectors);
writeFileSync(target, text);
console.log(`wrote ${vectors.cases.length} cases, ${text.length} bytes, to ${target}`);
