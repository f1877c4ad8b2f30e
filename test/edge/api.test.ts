// The HTTP surface of the Node edge: bearer authentication, body limits, 400s that name the field,
// JSON 404s, and policy routing (a version, a policy's default, an experiment's weighted arms chosen
// by a stable hash of the stickiness key, recorded on every trajectory).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { armIndex, unitHash } from '../../experiments/pick-arm.ts';
import { type EdgeHarness, startEdgeHarness, testApiKey } from './support/edge-harness.ts';

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ limits: { rolloutBodyBytes: 2048 } });
});
afterAll(async () => {
  await h?.close();
});

async function errorOf(response: Response) {
  return {
    status: response.status,
    ...((await response.json()) as { error: { code: string; field?: string; message: string } }).error,
  };
}

describe('authentication', () => {
  it('serves /health without a key', async () => {
    const response = await fetch(`${h.edge.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, service: 'edgerl-edge' });
  });

  it('answers 401 with a challenge without a key, with a wrong key, and with a non-bearer scheme', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong-key',
      `Basic ${btoa(`x:${testApiKey}`)}`,
      `Bearer ${testApiKey}x`,
    ]) {
      const response = await fetch(`${h.edge.url}/v1/groups`, {
        headers: authorization ? { authorization } : {},
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="edgerl"/);
      expect((await response.json()) as unknown).toMatchObject({ error: { code: 'unauthorized' } });
    }
    const ok = await fetch(`${h.edge.url}/v1/groups`, { headers: { authorization: `Bearer ${testApiKey}` } });
    expect(ok.status).toBe(200);
  });

  it('checks the key before reading the body or the store', async () => {
    const response = await fetch(`${h.edge.url}/v1/rollouts`, { method: 'POST', body: 'not json' });
    expect(response.status).toBe(401);
  });
});

describe('validation', () => {
  it('names the field at fault', async () => {
    const cases: [unknown, string][] = [
      [{ groupSize: 2 }, 'env'],
      [{ env: 'multi-hop' }, 'groupSize'],
      [{ env: 'multi-hop', groupSize: 0 }, 'groupSize'],
      [{ env: 'multi-hop', groupSize: 1.5 }, 'groupSize'],
      [{ env: 'multi-hop', groupSize: 1000 }, 'groupSize'],
      [{ env: 'no-such-env', groupSize: 2 }, 'env'],
      [{ env: 'multi-hop', groupSize: 2, split: 'test' }, 'split'],
      // sql-agent has no validation questions: a split it cannot sample is the request's fault.
      [{ env: 'sql-agent', groupSize: 2, split: 'validation' }, 'split'],
      [{ env: 'multi-hop', groupSize: 2, taskId: 'abc' }, 'taskId'],
      [{ env: 'multi-hop', groupSize: 2, taskId: '00000000-0000-4000-8000-000000000000' }, 'taskId'],
      [
        { env: 'multi-hop', groupSize: 2, split: 'train', taskId: '00000000-0000-4000-8000-000000000000' },
        'split',
      ],
      [{ env: 'multi-hop', groupSize: 2, policy: 'a', experiment: 'b' }, 'experiment'],
      [{ env: 'multi-hop', groupSize: 2, policy: 'no-such-policy' }, 'policy'],
      [{ env: 'multi-hop', groupSize: 2, experiment: 'no-such-experiment' }, 'experiment'],
      [{ env: 'multi-hop', groupSize: 2, settings: { temperature: -1 } }, 'settings.temperature'],
      [{ env: 'multi-hop', groupSize: 2, colour: 'red' }, 'colour'],
      [[1, 2], 'body'],
    ];
    for (const [body, field] of cases) {
      const error = await errorOf(await h.api('/v1/rollouts', { json: body }));
      expect({ body, status: error.status, code: error.code, field: error.field }).toEqual({
        body,
        status: 400,
        code: 'invalid-request',
        field,
      });
    }
  });

  it('refuses a body that is not JSON, and one over the size limit', async () => {
    const notJson = await errorOf(await h.api('/v1/rollouts', { method: 'POST', body: '{"env":' }));
    expect(notJson).toMatchObject({ status: 400, field: 'body', message: 'body: not valid JSON' });
    const big = await errorOf(
      await h.api('/v1/rollouts', {
        json: { env: 'multi-hop', groupSize: 1, metadata: { pad: 'x'.repeat(4096) } },
      }),
    );
    expect(big).toMatchObject({ status: 413, code: 'payload-too-large' });
  });

  it('answers unknown routes and unknown ids with JSON 404s', async () => {
    expect(await errorOf(await h.api('/v1/nothing-here'))).toMatchObject({ status: 404, code: 'not-found' });
    expect(await errorOf(await fetch(`${h.edge.url}/elsewhere`))).toMatchObject({
      status: 404,
      code: 'not-found',
    });
    const missing = await errorOf(await h.api('/v1/groups/00000000-0000-4000-8000-000000000000'));
    expect(missing).toMatchObject({ status: 404, code: 'not-found' });
    expect(await errorOf(await h.api('/v1/groups/12'))).toMatchObject({ status: 400, field: 'id' });
    expect(await errorOf(await h.api('/v1/groups?status=sleeping'))).toMatchObject({
      status: 400,
      field: 'status.0',
    });
  });
});

describe('policy routing', () => {
  it('routes a policy name to its default version and an adapter name to that version', async () => {
    const policy = await h.store.createPolicy({ name: 'router-a', baseModel: 'tiny-a' });
    const v0 = await h.store.registerPolicyVersion({ policyId: policy.id });
    const v1 = await h.store.registerPolicyVersion({ policyId: policy.id });
    await h.store.publishPolicyVersion({ versionId: v0.id, makeDefault: true });
    await h.store.publishPolicyVersion({ versionId: v1.id });
    const byName = (await (
      await h.api('/v1/rollouts', { json: { env: 'multi-hop', groupSize: 1, policy: 'router-a' } })
    ).json()) as Record<string, unknown>;
    // Version 0 is the base weights, served under the base model's name; later ones by adapter name.
    expect(byName).toMatchObject({ model: 'tiny-a', policyVersionId: v0.id });
    const byVersion = (await (
      await h.api('/v1/rollouts', { json: { env: 'multi-hop', groupSize: 1, policy: 'router-a@1' } })
    ).json()) as Record<string, unknown>;
    expect(byVersion).toMatchObject({ model: 'router-a@1', policyVersionId: v1.id });
    await h.edge.queue.idle();
    const models = h.double.requests.slice(-8).map((request) => request.body.model);
    expect(new Set(models)).toEqual(new Set(['tiny-a', 'router-a@1']));
    const { trajectories } = await h.store.getGroup({ groupId: byVersion.groupId as string });
    expect(trajectories[0]?.policyVersionId).toBe(v1.id);
  });

  it('splits an experiment by weight with a stable hash of the stickiness key, and records the arm', async () => {
    const policy = await h.store.createPolicy({ name: 'router-b', baseModel: 'tiny-b' });
    const a = await h.store.registerPolicyVersion({ policyId: policy.id });
    const b = await h.store.registerPolicyVersion({ policyId: policy.id });
    await h.store.publishPolicyVersion({ versionId: a.id });
    await h.store.publishPolicyVersion({ versionId: b.id });
    const { experiment, arms } = await h.store.createExperiment({
      name: 'ab-router-b',
      arms: [
        { name: 'control', policyVersionId: a.id, weight: 1 },
        { name: 'treatment', policyVersionId: b.id, weight: 3 },
      ],
    });
    const seen: Record<string, number> = { control: 0, treatment: 0 };
    for (let user = 0; user < 12; user++) {
      const key = `user-${user}`;
      // Independent expectation: arms sorted by name, u = SHA-256 based hash, cumulative weights 1, 4.
      const expected = ['control', 'treatment'][
        armIndex([1, 3], await unitHash(experiment.id, key))
      ] as string;
      const response = await h.api('/v1/trajectories', {
        json: { env: 'my-agent', experiment: 'ab-router-b', stickinessKey: key },
      });
      const body = (await response.json()) as {
        arm: string;
        model: string;
        trajectory: { experimentArmId: string; stickinessKey: string };
      };
      expect(body.arm).toBe(expected);
      expect(body.model).toBe(expected === 'control' ? 'tiny-b' : 'router-b@1');
      expect(body.trajectory.experimentArmId).toBe(arms.find((arm) => arm.name === expected)?.id);
      expect(body.trajectory.stickinessKey).toBe(key);
      seen[expected] = (seen[expected] ?? 0) + 1;
      // Sticky: the same key again gets the same arm.
      const again = (await (
        await h.api('/v1/trajectories', {
          json: { env: 'my-agent', experiment: experiment.id, stickinessKey: key },
        })
      ).json()) as { arm: string };
      expect(again.arm).toBe(expected);
    }
    expect((seen.control ?? 0) + (seen.treatment ?? 0)).toBe(12);
    await h.store.stopExperiment(experiment.id);
    const stopped = await errorOf(
      await h.api('/v1/trajectories', { json: { env: 'my-agent', experiment: 'ab-router-b' } }),
    );
    expect(stopped).toMatchObject({ status: 400, field: 'experiment' });
  });

  it('routes a whole rollout group to one arm', async () => {
    const policy = await h.store.createPolicy({ name: 'router-c', baseModel: 'tiny' });
    const a = await h.store.registerPolicyVersion({ policyId: policy.id });
    const b = await h.store.registerPolicyVersion({ policyId: policy.id });
    await h.store.publishPolicyVersion({ versionId: a.id });
    await h.store.publishPolicyVersion({ versionId: b.id });
    await h.store.createExperiment({
      name: 'ab-router-c',
      arms: [
        { name: 'a', policyVersionId: a.id, weight: 1 },
        { name: 'b', policyVersionId: b.id, weight: 1 },
      ],
    });
    const started = (await (
      await h.api('/v1/rollouts', {
        json: { env: 'multi-hop', groupSize: 3, experiment: 'ab-router-c', stickinessKey: 'k' },
      })
    ).json()) as { groupId: string; arm: string; experimentArmId: string };
    await h.edge.queue.idle();
    const { group, trajectories } = await h.store.getGroup({ groupId: started.groupId });
    expect(group.experimentId).not.toBeNull();
    expect(new Set(trajectories.map((trajectory) => trajectory.experimentArmId))).toEqual(
      new Set([started.experimentArmId]),
    );
    expect(trajectories.map((trajectory) => trajectory.metadata.arm)).toEqual([
      started.arm,
      started.arm,
      started.arm,
    ]);
  });
});
