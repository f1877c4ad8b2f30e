// The store's side of retrying groups the judge failed: each failure counts an attempt and sets
// next_score_at, claimGroups takes an unscored group back only after it (and only when asked), a
// success clears the wait, and the last allowed failure ends the group `failed`, named as such.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { scoreAttemptsExhausted } from '../../protocol/score-retry.ts';
import { makeCompleteGroup } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;
beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
});
afterAll(async () => {
  await testStore?.close();
});

const hourly = { maxAttempts: 3, baseSeconds: 3600, capSeconds: 3600 };

async function state(groupId: string) {
  const [row] = (
    await store.sql.query(
      `select status, score_attempts, last_score_error, next_score_at > now() + interval '10 minutes', status_reason
         from rollout_groups where id = $1`,
      [groupId],
    )
  ).rows;
  const [status, attempts, lastError, waitsLong, reason] = row ?? [];
  return { status, attempts: Number(attempts), lastError, waitsLong, reason };
}

describe('score attempts', () => {
  it('counts a failure and waits before claiming the group again, only for a claim that asks', async () => {
    const { group } = await makeCompleteGroup(store, [0, 1]);
    await store.markGroupUnscored({ groupId: group.id, reason: 'http-503: down', retry: hourly, jitter: 0 });
    // 3600·2^0 = 3600 s, equal jitter at 0: half of it, 1800 s.
    expect(await state(group.id)).toMatchObject({
      status: 'unscored',
      attempts: 1,
      lastError: 'http-503: down',
      waitsLong: true,
    });
    const retrying = await store.claimGroups({ owner: 'score-retry-a', limit: 10, retryUnscored: true });
    expect(retrying.map((claimed) => claimed.id)).not.toContain(group.id);

    // Its wait over (a zero wait), the group is claimable again, but only by a claim that asks.
    await store.markGroupUnscored({
      groupId: group.id,
      reason: 'timeout',
      retry: { ...hourly, baseSeconds: 0 },
    });
    expect(await state(group.id)).toMatchObject({ status: 'unscored', attempts: 2, waitsLong: false });
    const plain = await store.claimGroups({ owner: 'score-retry-b', limit: 100 });
    expect(plain.map((claimed) => claimed.id)).not.toContain(group.id);
    const excluded = await store.claimGroups({
      owner: 'score-retry-b',
      limit: 100,
      retryUnscored: true,
      excludeIds: [group.id],
    });
    expect(excluded.map((claimed) => claimed.id)).not.toContain(group.id);
    const again = await store.claimGroups({ owner: 'score-retry-c', limit: 100, retryUnscored: true });
    expect(again.map((claimed) => claimed.id)).toContain(group.id);
  });

  it('ends the group failed after the last attempt, and spells out a NUL in the reason', async () => {
    const { group } = await makeCompleteGroup(store, [0, 1]);
    await store.markGroupUnscored({ groupId: group.id, reason: 'bad', retry: { ...hourly, maxAttempts: 2 } });
    const ended = await store.markGroupUnscored({
      groupId: group.id,
      reason: 'worse\u0000',
      retry: { ...hourly, maxAttempts: 2 },
    });
    expect(ended.status).toBe('failed');
    expect(ended.nextScoreAt).toBeNull();
    expect(ended.statusReason).toBe(
      `${scoreAttemptsExhausted}: the judge failed 2 time(s); last: worse\\u0000`,
    );
    const claimed = await store.claimGroups({ owner: 'score-retry-d', limit: 100, retryUnscored: true });
    expect(claimed.map((row) => row.id)).not.toContain(group.id);
  });
});
