// The committed loss vectors (test/fixtures/grpo/loss-vectors.json) against what objective-loss.ts gives
// now, so the file the PyTorch engine is checked with can never drift from the TypeScript definitions.
import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateLossVectors, type LossVectorCase, type LossVectors } from './loss-vectors.ts';

const file = new URL('../../test/fixtures/grpo/loss-vectors.json', import.meta.url);
const relativeTolerance = 1e-6;

let committed: LossVectors;
let current: LossVectors;

beforeAll(async () => {
  await tf.setBackend('cpu');
  committed = JSON.parse(readFileSync(file, 'utf8')) as LossVectors;
  current = await generateLossVectors();
});

/** Every place where `a` and `b` differ beyond the tolerance (null, NaN, stands for itself), by path. */
function differences(a: unknown, b: unknown, path: string, out: string[]): string[] {
  if (typeof a === 'number' && typeof b === 'number') {
    const gap = Math.abs(a - b);
    if (!(gap <= relativeTolerance * Math.max(Math.abs(a), Math.abs(b)))) {
      out.push(`${path}: file ${b}, now ${a} (|difference| ${gap})`);
    }
  } else if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) out.push(`${path}: file has ${b.length} entries, now ${a.length}`);
    else for (const [index, value] of a.entries()) differences(value, b[index], `${path}[${index}]`, out);
  } else if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      if (!(key in a) || !(key in b))
        out.push(`${path}.${key}: ${key in a ? 'missing from the file' : 'no longer produced'}`);
      else
        differences(
          (a as Record<string, unknown>)[key],
          (b as Record<string, unknown>)[key],
          `${path}.${key}`,
          out,
        );
    }
  } else if (a !== b) {
    out.push(`${path}: file ${JSON.stringify(b)}, now ${JSON.stringify(a)}`);
  }
  return out;
}

describe('loss vectors', () => {
  it('the file has the same cases, in the same order, as the generator', () => {
    expect(committed.cases.map((entry) => entry.name)).toEqual(current.cases.map((entry) => entry.name));
    expect(committed.about).toBe(current.about);
  });

  it('every case of the file equals the TypeScript losses within 1e-6 relative', () => {
    const problems = current.cases.flatMap((entry, index) => {
      const stored = committed.cases.find((candidate) => candidate.name === entry.name);
      if (!stored) return [`${entry.name}: missing from the file`];
      return differences(entry, stored, `cases[${index}] "${entry.name}"`, []);
    });
    expect(
      problems,
      `regenerate with npx tsx scripts/write-loss-vectors.ts:\n${problems.join('\n')}`,
    ).toEqual([]);
  });

  it('covers what the PyTorch copy must get right', () => {
    type GrpoCase = LossVectorCase & { objective: Extract<LossVectorCase['objective'], { kind: 'grpo' }> };
    const grpo = current.cases.filter((entry): entry is GrpoCase => entry.objective.kind === 'grpo');
    const combos = new Set(
      grpo.map((entry) => `${entry.objective.loss.loss_kind} ${entry.objective.loss.aggregation}`),
    );
    expect([...combos].sort()).toEqual([
      'cispo sequence-mean',
      'cispo token-mean',
      'ppo-clip sequence-mean',
      'ppo-clip token-mean',
    ]);
    expect(grpo.some((entry) => entry.objective.loss.beta > 0)).toBe(true);
    expect(grpo.some((entry) => entry.objective.loss.beta === 0 && entry.inputs.ref_logprobs)).toBe(true);
    expect(grpo.some((entry) => entry.objective.loss.correction)).toBe(true);
    expect(
      grpo.some((entry) => entry.expected.sums.clipped_low! > 0 && entry.expected.sums.clipped_high! > 0),
    ).toBe(true);
    expect(current.cases.some((entry) => entry.inputs.old_logprobs.flat().includes(null))).toBe(true);
    expect(current.cases.some((entry) => entry.inputs.logprobs.flat().includes(null))).toBe(true);
    expect(current.cases.some((entry) => entry.normaliser.tokens > entry.expected.sums.tokens!)).toBe(true);
    expect(
      current.cases.some(
        (entry) =>
          entry.objective.kind === 'sft' &&
          entry.inputs.weighted_mask
            .flat()
            .some((weight, index) => weight !== entry.inputs.mask.flat()[index]),
      ),
    ).toBe(true);
    // Small enough to read in a diff.
    expect(readFileSync(file).length).toBeLessThan(200_000);
  });
});
