// GET /v1/models on the edge (edge/routes/models.ts), through the openai client as a model picker calls
// it: at the root, the edge's default model, each policy and its published versions (not a retired or
// still-training one), every one of which the proxy then accepts as `model`; under a trajectory URL,
// the one model that trajectory's calls are sent with. Keys are checked as on the proxy.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPolicyWithBase } from '../../db/create-policy-with-base.ts';
import type { PolicyVersion } from '../../db/schema/policies.ts';
import { type EdgeHarness, startEdgeHarness, testApiKey } from './support/edge-harness.ts';

const recordKey = 'record-key-0123456789';
let h: EdgeHarness;
let versions: Record<'base' | 'retired' | 'current' | 'training', PolicyVersion>;
beforeAll(async () => {
  h = await startEdgeHarness({ config: { recordKeys: [recordKey] } });
  const policy = await createPolicyWithBase(h.store, { name: 'agent', baseModel: 'agent-base' });
  const base = await h.store.resolvePolicyVersion('agent@0');
  const retired = await h.store.registerPolicyVersion({ policyId: policy.id, adapterUri: '/a/1' });
  const current = await h.store.registerPolicyVersion({ policyId: policy.id, adapterUri: '/a/2' });
  await h.store.publishPolicyVersion({ versionId: retired.id });
  await h.store.publishPolicyVersion({ versionId: current.id, makeDefault: true });
  await h.store.retirePolicyVersion(retired.id);
  const training = await h.store.registerPolicyVersion({ policyId: policy.id, adapterUri: '/a/3' });
  if (!base) throw new Error('agent@0 was not created');
  versions = {
    base,
    retired: await h.store.getPolicyVersion(retired.id),
    current: await h.store.getPolicyVersion(current.id),
    training,
  };
});
afterAll(async () => {
  await h?.close();
});

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

describe('GET /v1/models', () => {
  it('lists the default model, the policies and their published versions in OpenAI’s shape', async () => {
    const client = new OpenAI({ baseURL: `${h.edge.url}/v1`, apiKey: recordKey });
    const listed = [];
    for await (const model of client.models.list()) listed.push(model);
    const policy = await h.store.getPolicy({ policyName: 'agent' });
    expect(listed).toEqual([
      // The harness's DEFAULT_MODEL, a name the store does not know: sent to the endpoint as is.
      { id: 'tiny-base', object: 'model', created: 0, owned_by: 'edgerl' },
      { id: 'agent', object: 'model', created: seconds(policy.createdAt), owned_by: 'edgerl' },
      { id: 'agent@0', object: 'model', created: seconds(versions.base.createdAt), owned_by: 'edgerl' },
      { id: 'agent@2', object: 'model', created: seconds(versions.current.createdAt), owned_by: 'edgerl' },
    ]);
    expect(versions.retired.adapterName).toBe('agent@1');
    expect(versions.training.adapterName).toBe('agent@3');
  });

  it('lists only names the proxy accepts as `model`; the retired one it leaves out is refused', async () => {
    const listed = (await (await h.api('/v1/models')).json()) as { data: { id: string }[] };
    // A trajectory that recorded no route (started on the store): the proxy routes the body's model.
    const sent: Record<string, unknown> = {};
    for (const { id } of listed.data) {
      const trajectory = await h.store.startTrajectory({ env: 'my-agent' });
      const calls = h.double.requests.length;
      const response = await h.api('/v1/chat/completions', {
        headers: { 'x-edgerl-trajectory': trajectory.id },
        json: { model: id, messages: [{ role: 'user', content: 'Hi.' }] },
      });
      expect(response.status, `${id}: ${await response.clone().text()}`).toBe(200);
      sent[id] = h.double.requests[calls]?.body.model;
    }
    // Each as the proxy routes it: a policy to its default, version 0 to the base model's name.
    expect(sent).toEqual({
      'tiny-base': 'tiny-base',
      agent: 'agent@2',
      'agent@0': 'agent-base',
      'agent@2': 'agent@2',
    });
    const trajectory = await h.store.startTrajectory({ env: 'my-agent' });
    const retired = await h.api('/v1/chat/completions', {
      headers: { 'x-edgerl-trajectory': trajectory.id },
      json: { model: 'agent@1', messages: [{ role: 'user', content: 'Hi.' }] },
    });
    expect(retired.status).toBe(400);
  });

  it('under a trajectory URL, lists the one model its calls are sent with', async () => {
    const started = (await (
      await h.api('/v1/trajectories', { json: { env: 'my-agent', policy: 'agent' } })
    ).json()) as { baseURL: string; key: string };
    const client = new OpenAI({ baseURL: started.baseURL, apiKey: 'unused' });
    const listed = [];
    for await (const model of client.models.list()) listed.push(model);
    expect(listed).toEqual([
      { id: 'agent@2', object: 'model', created: seconds(versions.current.createdAt), owned_by: 'edgerl' },
    ]);
    // The same through the header on /v1.
    const byHeader = await h.api('/v1/models', { headers: { 'x-edgerl-trajectory': started.key } });
    expect(((await byHeader.json()) as { data: unknown[] }).data).toEqual(listed);
  });

  it('checks keys as the proxy does: no API key 401, a made-up trajectory key 403', async () => {
    const bare = await fetch(`${h.edge.url}/v1/models`);
    expect(bare.status).toBe(401);
    const started = (await (await h.api('/v1/trajectories', { json: { env: 'my-agent' } })).json()) as {
      trajectory: { id: string };
    };
    const forged = await fetch(`${h.edge.url}/t/${started.trajectory.id}.${'A'.repeat(43)}/v1/models`);
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('trajectory-key');
    // The admin key reads it too.
    expect((await h.api('/v1/models', { headers: { authorization: `Bearer ${testApiKey}` } })).status).toBe(
      200,
    );
  });
});
