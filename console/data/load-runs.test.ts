// Which x axis the runs page picks when nobody chose: the step, unless the runs' step ranges are
// disjoint (they would sit at the two ends of one axis), then steps since each run began.
import { describe, expect, it } from 'vitest';
import type { TrainingRunListing } from '../../db/store.ts';
import { autoAlign } from './load-runs.ts';

const run = (firstStep: number | null, lastStep: number | null) =>
  ({ firstStep, lastStep }) as TrainingRunListing;

describe('autoAlign', () => {
  it('keeps the step axis for one run, overlapping runs, and runs without steps', () => {
    expect(autoAlign([run(801, 814)])).toBe('step');
    expect(autoAlign([run(0, 10), run(5, 20)])).toBe('step');
    expect(autoAlign([run(0, 10), run(null, null)])).toBe('step');
  });

  it('aligns at the first step when two ranges do not meet', () => {
    expect(autoAlign([run(801, 814), run(0, 5)])).toBe('first');
    expect(autoAlign([run(0, 5), run(3, 9), run(10, 12)])).toBe('first');
  });
});
