import { describe, expect, it } from 'vitest';
import { planOrderings } from './plan-orderings.ts';

describe('planOrderings', () => {
  it('is reproducible from the seed', () => {
    expect(planOrderings(8, 3, 99)).toEqual(planOrderings(8, 3, 99));
    expect(planOrderings(8, 1, 99)[0]?.order).not.toEqual(planOrderings(8, 1, 100)[0]?.order);
  });

  it('reverses every second ordering, so two orders put each trajectory at the middle on average', () => {
    const [first, second] = planOrderings(8, 2, 5);
    expect(second?.order).toEqual([...(first?.order ?? [])].reverse());
    // Mean position of each trajectory over the two orders: (p + (7 − p)) / 2 = 3.5 for every one.
    for (let index = 0; index < 8; index++) {
      const p1 = first?.order.indexOf(index) ?? -1;
      const p2 = second?.order.indexOf(index) ?? -1;
      expect((p1 + p2) / 2).toBe(3.5);
    }
  });

  it('draws fresh, distinct, short labels for each ordering', () => {
    const plans = planOrderings(64, 2, 1);
    for (const plan of plans) {
      expect(new Set(plan.labels).size).toBe(64);
      for (const label of plan.labels) expect(label).toMatch(/^[a-z][2-9][a-z]$/);
    }
    expect(plans[0]?.labels).not.toEqual(plans[1]?.labels);
  });

  it('rejects a bad size or count by name', () => {
    expect(() => planOrderings(0, 1, 0)).toThrow(/group size/);
    expect(() => planOrderings(3, 0, 0)).toThrow(/orderings/);
  });
});
