// The K orders in which RULER shows a group to the judge, and the short labels the judge sees instead
// of trajectory ids. Pure: everything follows from (group size, K, seed).
//
// Position bias: LLM judges favour answers by where they appear (Wang et al. 2023, "Large Language
// Models are not Fair Evaluators", arXiv:2305.17926; Zheng et al. 2023, "Judging LLM-as-a-Judge",
// arXiv:2306.05685 §3.3). Both counter it by swapping positions and averaging. Here ordering 2j is a
// fresh seeded shuffle and ordering 2j+1 is its reverse, so for even K every trajectory's mean position
// is exactly the middle of the list, and linear primacy/recency effects cancel in the average.
//
// Labels: fresh random labels per ordering (letter-digit-letter, e.g. "k7q") rather than the real ids
// (a UUID costs ~20 tokens per mention) or "1..N" (which the judge could read as a rank or confuse with
// positions). Scores are matched back by label, never by position.
import { mulberry32, type Random, randomInt, seededShuffle } from './shuffle.ts';

export interface JudgeOrdering {
  /** Indexes into the group's canonical trajectory list, in the order the judge sees them. */
  readonly order: readonly number[];
  /** The label shown for each presented position: `labels[p]` tags trajectory `order[p]`. */
  readonly labels: readonly string[];
}

const LETTERS = 'abcdefghjkmnpqrstuvwxyz'; // no i, l, o: easily confused with digits
const DIGITS = '23456789'; // no 0, 1

export function planOrderings(count: number, orderings: number, seed: number): JudgeOrdering[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`group size must be ≥ 1, got ${count}`);
  if (!Number.isInteger(orderings) || orderings < 1) {
    throw new RangeError(`orderings must be an integer ≥ 1, got ${orderings}`);
  }
  const random = mulberry32(seed);
  const identity = Array.from({ length: count }, (_, index) => index);
  const plans: JudgeOrdering[] = [];
  for (let k = 0; k < orderings; k++) {
    const previous = plans[k - 1];
    const order = k % 2 === 1 && previous ? [...previous.order].reverse() : seededShuffle(identity, random);
    plans.push({ order, labels: drawLabels(random, count) });
  }
  return plans;
}

function drawLabels(random: Random, count: number): string[] {
  const labels = new Set<string>();
  while (labels.size < count) {
    labels.add(
      `${LETTERS[randomInt(random, LETTERS.length)]}${DIGITS[randomInt(random, DIGITS.length)]}${LETTERS[randomInt(random, LETTERS.length)]}`,
    );
  }
  return [...labels];
}
