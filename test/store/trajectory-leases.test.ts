// Episode leases and the sweep (db/store/trajectory-leases.ts, sweep-trajectories.ts): one runner at
// a time, even when several claim at once; a turn append renews the lease (unless it was renewed
// moments ago) and is refused once the episode was taken over; beats renew only what the runner holds; the sweep takes stale episodes (not
// live ones), counts its takeovers, ends those taken over too often or too old with a reason, and the
// group completes when the sweep ends its last episode. Leases are expired by SQL, never by waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { makeGroup, userTurn } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;

beforeAll(async () => {
  testStore = await openTestStore({ maxConnections: 4 });
  store = testStore.store;
});
afterAll(async () => {
  await testStore?.close();
});

const lease = (runner: string) => ({ runner, leaseSeconds: 60 });
const sweepOptions = { leaseSeconds: 60, maxResumes: 2, maxAgeSeconds: 3600 };

async function expire(trajectoryIds: readonly string[]): Promise<void> {
  await store.sql.query(
    `update trajectories set lease_expires_at = now() - interval '1 second' where id = any($1::uuid[])`,
    [trajectoryIds],
  );
}

async function leaseOf(trajectoryId: string) {
  const { rows } = await store.sql.query(
    `select runner, resumes, coalesce(lease_expires_at > now(), false), heartbeat_at is not null
       from trajectories where id = $1`,
    [trajectoryId],
  );
  const [runner, resumes, held, beaten] = rows[0] as [string | null, number, boolean, boolean];
  return { runner, resumes, held, beaten };
}

async function codeOf(work: Promise<unknown>): Promise<unknown> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return isStoreError(error) ? error.code : error;
}

/** Only the sweep's own fixtures: every test makes its own groups, and sweeps are scoped by what they return. */
function mine(ids: readonly { trajectoryId: string }[], fixture: readonly { id: string }[]) {
  const wanted = new Set(fixture.map((trajectory) => trajectory.id));
  return ids.filter((entry) => wanted.has(entry.trajectoryId)).map((entry) => entry.trajectoryId);
}

describe('claiming an episode', () => {
  it('gives it to one runner when several claim at once; the holder renews, others are told who holds it', async () => {
    const { task, trajectories } = await makeGroup(store, { writer: 'runner', size: 1 });
    const id = (trajectories[0] as { id: string }).id;
    const claims = await Promise.all(
      ['a', 'b', 'c', 'd'].map((runner) => store.claimTrajectory({ trajectoryId: id, ...lease(runner) })),
    );
    expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
    const holder = (await leaseOf(id)).runner as string;
    expect(['a', 'b', 'c', 'd']).toContain(holder);
    // The claim brings back the row as it left it, and the episode's task.
    expect(await store.claimTrajectory({ trajectoryId: id, ...lease(holder) })).toMatchObject({
      claimed: true,
      trajectory: { id, runner: holder, status: 'running', turnCount: 0 },
      task: { id: task.id, input: task.input },
    });
    const other = holder === 'a' ? 'b' : 'a';
    const refused = await store.claimTrajectory({ trajectoryId: id, ...lease(other) });
    expect(refused).toMatchObject({ claimed: false });
    expect(refused.claimed === false && refused.reason).toContain(holder);
    await expire([id]);
    expect(await store.claimTrajectory({ trajectoryId: id, ...lease(other) })).toMatchObject({
      claimed: true,
      trajectory: { runner: other },
    });
    expect((await leaseOf(id)).runner).toBe(other);
  });

  it('refuses an ended episode and releases only what the runner holds', async () => {
    const { trajectories } = await makeGroup(store, { writer: 'runner', size: 2 });
    const [first, second] = trajectories.map((trajectory) => trajectory.id) as [string, string];
    expect(await store.claimTrajectories({ trajectoryIds: [first, second], ...lease('r') })).toHaveLength(2);
    await store.finishTrajectory({ trajectoryId: first, status: 'finished', runner: 'r' });
    expect(await leaseOf(first)).toMatchObject({ runner: 'r', held: false });
    expect(await store.claimTrajectory({ trajectoryId: first, ...lease('r') })).toMatchObject({
      claimed: false,
      reason: 'it already ended (finished)',
    });
    expect(await store.releaseTrajectories({ runner: 'other', trajectoryIds: [second] })).toEqual([]);
    expect(await store.releaseTrajectories({ runner: 'r', trajectoryIds: [second] })).toEqual([second]);
    expect(await leaseOf(second)).toMatchObject({ runner: null, held: false });
    // A sweep takes it at once, and a clean hand-back is not counted as a resume.
    const swept = await store.sweepTrajectories({ runner: 'next', ...sweepOptions });
    expect(mine(swept.taken, trajectories)).toEqual([second]);
    expect(await leaseOf(second)).toMatchObject({ runner: 'next', resumes: 0, held: true });
  });
});

describe('turn appends and beats under a lease', () => {
  it('renews the lease with the append, and refuses the turn and the finish of a runner taken over', async () => {
    const { trajectories } = await makeGroup(store, { writer: 'runner', size: 1 });
    const id = (trajectories[0] as { id: string }).id;
    await store.claimTrajectory({ trajectoryId: id, ...lease('old') });
    await expire([id]);
    await store.appendTurn(userTurn(id, 0), lease('old'));
    // The append renewed the lease it found expired: nobody had taken the episode in between.
    expect(await leaseOf(id)).toMatchObject({ runner: 'old', held: true });
    await expire([id]);
    await store.claimTrajectory({ trajectoryId: id, ...lease('new') });
    expect(await codeOf(store.appendTurn(userTurn(id, 1), lease('old')))).toBe('lease-lost');
    // A retry of a turn the old runner stored is still a no-op, not an error.
    expect(await store.appendTurn(userTurn(id, 0), lease('old'))).toMatchObject({ created: false });
    expect(
      await codeOf(store.finishTrajectory({ trajectoryId: id, status: 'finished', runner: 'old' })),
    ).toBe('lease-lost');
    await store.appendTurn(userTurn(id, 1), lease('new'));
    const { turns, trajectory } = await store.getTrajectory(id);
    expect(turns.map((turn) => turn.index)).toEqual([0, 1]);
    expect(trajectory.status).toBe('running');
  });

  it('keeps an expiry renewed moments ago on an append, and renews one renewed longer ago', async () => {
    const { trajectories } = await makeGroup(store, { writer: 'runner', size: 1 });
    const id = (trajectories[0] as { id: string }).id;
    await store.claimTrajectory({ trajectoryId: id, ...lease('r') });
    const expiry = async () => {
      const { rows } = await store.sql.query(
        `select lease_expires_at::text, lease_expires_at > now() + interval '50 seconds' from trajectories where id = $1`,
        [id],
      );
      const [at, long] = rows[0] as [string, boolean];
      return { at, long };
    };
    const claimed = await expiry();
    // Just claimed for 60 s: the append leaves the expiry as it is (so Postgres can update the row in place).
    await store.appendTurn(userTurn(id, 0), lease('r'));
    expect(await expiry()).toEqual(claimed);
    // As if the last renewal were 20 s old (40 s left, under 0.9 of the lease): the append renews it.
    await store.sql.query(
      `update trajectories set lease_expires_at = now() + interval '40 seconds' where id = $1`,
      [id],
    );
    expect((await expiry()).long).toBe(false);
    await store.appendTurns([userTurn(id, 1), userTurn(id, 2)], lease('r'));
    expect((await expiry()).long).toBe(true);
  });

  it('beats only the episodes the runner still holds', async () => {
    const { trajectories } = await makeGroup(store, { writer: 'runner', size: 3 });
    const ids = trajectories.map((trajectory) => trajectory.id) as [string, string, string];
    await store.claimTrajectories({ trajectoryIds: ids, ...lease('r') });
    await expire(ids);
    await store.claimTrajectory({ trajectoryId: ids[1], ...lease('thief') });
    await store.finishTrajectory({
      trajectoryId: ids[2],
      status: 'error',
      errorReason: 'x',
      writer: 'runner',
    });
    expect(await store.beatTrajectories({ trajectoryIds: ids, ...lease('r') })).toEqual([ids[0]]);
    expect(await leaseOf(ids[0])).toMatchObject({ held: true, beaten: true });
    expect(await leaseOf(ids[2])).toMatchObject({ held: false });
  });
});

describe('the sweep', () => {
  it('takes stale episodes, leaves live ones, and adds its own under stale-or-own', async () => {
    const { trajectories } = await makeGroup(store, { writer: 'runner', size: 3 });
    const [live, stale, own] = trajectories.map((trajectory) => trajectory.id) as [string, string, string];
    await store.claimTrajectories({ trajectoryIds: [live, own], ...lease('edge-a') });
    await store.claimTrajectories({ trajectoryIds: [stale], ...lease('edge-b') });
    await expire([stale]);
    const periodic = await store.sweepTrajectories({ runner: 'edge-a', ...sweepOptions });
    expect(mine(periodic.taken, trajectories)).toEqual([stale]);
    expect(await leaseOf(stale)).toMatchObject({ runner: 'edge-a', resumes: 1, held: true });
    expect(await leaseOf(live)).toMatchObject({ runner: 'edge-a', resumes: 0 });
    // Another edge's sweep sees nothing to take: every episode is held and beating.
    expect(
      mine((await store.sweepTrajectories({ runner: 'edge-c', ...sweepOptions })).taken, trajectories),
    ).toEqual([]);
    const restart = await store.sweepTrajectories({
      runner: 'edge-a',
      ...sweepOptions,
      scope: 'stale-or-own',
    });
    expect(mine(restart.taken, trajectories).sort()).toEqual([live, stale, own].sort());
  });

  it('takes a rollout slot whose first runner never came once its wait lapses, without counting a resume', async () => {
    const { group, task } = await makeGroup(store, { writer: 'runner', size: 3, started: 0 });
    const delivered = await store.startTrajectory({ groupId: group.id, awaitRunnerSeconds: 60 });
    const lost = await store.startTrajectory({ groupId: group.id, awaitRunnerSeconds: 60 });
    // Joined by an outside agent through the proxy: no edge runs it, so no sweep may take it.
    const agent = await store.startTrajectory({ groupId: group.id, taskId: task.id });
    const fixture = [delivered, lost, agent];
    // Any runner may claim a waiting slot (its queue message arrived); nobody sweeps one still waiting.
    expect(await store.claimTrajectory({ trajectoryId: delivered.id, ...lease('consumer') })).toMatchObject({
      claimed: true,
    });
    expect(mine((await store.sweepTrajectories({ runner: 's', ...sweepOptions })).taken, fixture)).toEqual(
      [],
    );
    await expire([lost.id]);
    expect(mine((await store.sweepTrajectories({ runner: 's', ...sweepOptions })).taken, fixture)).toEqual([
      lost.id,
    ]);
    expect(await leaseOf(lost.id)).toMatchObject({ runner: 's', resumes: 0, held: true });
    // A failed group's slots are not worth resuming; live traffic has no group.
    const failed = await makeGroup(store, { writer: 'runner', size: 1, started: 0 });
    const abandoned = await store.startTrajectory({ groupId: failed.group.id, awaitRunnerSeconds: 60 });
    await store.markGroupFailed({ groupId: failed.group.id, reason: 'test' });
    const live = await store.startTrajectory({ env: 'live' });
    // Even the embedded store's restart (every running episode) leaves those and the agent's alone.
    const everything = await store.sweepTrajectories({ runner: 's', ...sweepOptions, scope: 'all' });
    expect(mine(everything.taken, [...fixture, abandoned, live]).sort()).toEqual(
      [delivered.id, lost.id].sort(),
    );
    expect(await leaseOf(agent.id)).toMatchObject({ runner: null, held: false });
  });

  it('ends an episode taken over too often, with a reason, and completes its group', async () => {
    const { group, trajectories } = await makeGroup(store, { writer: 'runner', size: 2 });
    const [done, looping] = trajectories.map((trajectory) => trajectory.id) as [string, string];
    await store.finishTrajectory({
      trajectoryId: done,
      status: 'finished',
      verifierReward: 1,
      writer: 'runner',
    });
    await store.claimTrajectory({ trajectoryId: looping, ...lease('crashing') });
    for (let resume = 1; resume <= sweepOptions.maxResumes; resume++) {
      await expire([looping]);
      const swept = await store.sweepTrajectories({ runner: 'crashing', ...sweepOptions });
      expect(mine(swept.taken, trajectories)).toEqual([looping]);
      expect((await leaseOf(looping)).resumes).toBe(resume);
    }
    await expire([looping]);
    const last = await store.sweepTrajectories({ runner: 'crashing', ...sweepOptions });
    expect(mine(last.taken, trajectories)).toEqual([]);
    expect(mine(last.ended, trajectories)).toEqual([looping]);
    expect(last.completedGroups).toContain(group.id);
    const { trajectory } = await store.getTrajectory(looping);
    expect(trajectory.status).toBe('error');
    expect(trajectory.errorReason).toMatch(/^abandoned: its runner stopped 3 time\(s\)/);
    expect((await leaseOf(looping)).held).toBe(false);
    expect((await store.getGroup({ groupId: group.id })).group.status).toBe('complete');
  });

  it('ends a stale episode that is too old, and completes a running group whose slots all ended', async () => {
    const old = await makeGroup(store, { writer: 'runner', size: 1 });
    const oldId = (old.trajectories[0] as { id: string }).id;
    await store.claimTrajectory({ trajectoryId: oldId, ...lease('gone') });
    await expire([oldId]);
    await store.sql.query(`update trajectories set started_at = now() - interval '2 hours' where id = $1`, [
      oldId,
    ]);
    // A group left `running` with every slot ended (written around the store).
    const stuck = await makeGroup(store, { writer: 'runner', size: 1 });
    await store.sql.query(`update trajectories set status = 'finished' where group_id = $1`, [
      stuck.group.id,
    ]);
    const swept = await store.sweepTrajectories({ runner: 's', ...sweepOptions });
    expect(mine(swept.ended, old.trajectories)).toEqual([oldId]);
    expect(swept.ended.find((entry) => entry.trajectoryId === oldId)?.reason).toMatch(/too old to resume/);
    expect(swept.completedGroups).toEqual(expect.arrayContaining([old.group.id, stuck.group.id]));
    expect((await store.getGroup({ groupId: stuck.group.id })).group.status).toBe('complete');
  });

  it('never gives one stale episode to two sweeps at once', async () => {
    const { trajectories } = await makeGroup(store, { writer: 'runner', size: 4 });
    const ids = trajectories.map((trajectory) => trajectory.id);
    await store.claimTrajectories({ trajectoryIds: ids, ...lease('dead') });
    await expire(ids);
    const sweeps = await Promise.all(
      ['s1', 's2', 's3'].map((runner) => store.sweepTrajectories({ runner, ...sweepOptions })),
    );
    const taken = sweeps.flatMap((sweep) => mine(sweep.taken, trajectories));
    expect(taken.sort()).toEqual([...ids].sort());
  });
});
