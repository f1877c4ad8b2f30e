// The group view's advantages: the trainer's formula on the usable trajectories' final reward (else
// the verifier's), with the run's scaling or the trainer's default. Expected values by hand.
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../db/schema/trajectories.ts';
import { advantagesOf } from './group-advantages.ts';

function trajectory(id: string, fields: Partial<Trajectory>): Trajectory {
  return {
    status: 'finished',
    verifierReward: null,
    judgeScore: null,
    finalReward: null,
    turnCount: 3,
    ...fields,
    id,
  } as Trajectory;
}

describe('advantagesOf', () => {
  const members = [
    trajectory('a', { finalReward: 1, verifierReward: 0 }),
    trajectory('b', { verifierReward: 0 }),
    trajectory('c', { status: 'truncated', finalReward: 0 }),
    trajectory('d', { finalReward: 1 }),
    trajectory('e', { status: 'error', finalReward: 1 }),
    trajectory('f', { status: 'running' }),
  ];

  it('centres on the group mean by default (the trainer default, no std division)', () => {
    // Usable rewards a, b, c, d = 1, 0, 0, 1: mean 0.5, so advantages ±0.5; e (error) and f are out.
    const view = advantagesOf(members, undefined);
    expect(view).toMatchObject({ scale: 'none', scaleFrom: 'default', mean: 0.5, std: 0.5, noSignal: false });
    expect(view.advantages).toEqual({ a: 0.5, b: -0.5, c: -0.5, d: 0.5 });
  });

  it("divides by the group std when the run's configuration says so", () => {
    // std 0.5: ±0.5 / (0.5 + 1e-6).
    const view = advantagesOf(members, { loss: { scaleRewards: 'group' } });
    expect(view.scaleFrom).toBe('run');
    expect(Math.abs((view.advantages.a ?? 0) - 0.5 / (0.5 + 1e-6))).toBeLessThan(1e-12);
  });

  it('gives zeros and no signal when the rewards tie, nothing when none is rewarded', () => {
    const tied = advantagesOf(
      [trajectory('a', { finalReward: 1 }), trajectory('b', { finalReward: 1 })],
      undefined,
    );
    expect(tied).toMatchObject({ noSignal: true, advantages: { a: 0, b: 0 } });
    expect(advantagesOf([trajectory('a', { status: 'running' })], undefined)).toMatchObject({
      advantages: {},
      mean: null,
    });
  });
});
