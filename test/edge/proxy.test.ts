// The recording proxy and the trajectory routes on the Node edge: an agent that only changes its
// base URL (and sends one header) is recorded turn by turn, token-exact when the endpoint returns
// ids; history rewrites, closed trajectories and upstream failures are answered as such.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeHarness, startEdgeHarness } from './support/edge-harness.ts';

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ defaultModel: 'tiny-base' });
});
afterAll(async () => {
  await h?.close();
});

/** Each started trajectory's key (docs/edge.md, "Who writes a trajectory"), by its id. */
const keys = new Map<string, string>();

async function startTrajectory(body: Record<string, unknown> = { env: 'my-agent' }): Promise<string> {
  const response = await h.api('/v1/trajectories', { json: body });
  expect(response.status).toBe(201);
  const started = (await response.json()) as { trajectory: { id: string }; key: string };
  keys.set(started.trajectory.id, started.key);
  return started.trajectory.id;
}

/** The header that writes a trajectory: its key, or the id of one started without a key. */
function keyHeader(trajectoryId: string): Record<string, string> {
  return { 'x-edgerl-trajectory': keys.get(trajectoryId) ?? trajectoryId };
}

function chat(trajectoryId: string | undefined, body: Record<string, unknown>) {
  return h.api('/v1/chat/completions', {
    json: body,
    headers: trajectoryId ? keyHeader(trajectoryId) : {},
  });
}

const opening = [
  { role: 'system', content: 'You follow keys.' },
  { role: 'user', content: 'Find the value of key ab.' },
];

describe('the recording proxy', () => {
  it("stores the request's tools with the trajectory, replacing a different list, refusing a bad one", async () => {
    const id = await startTrajectory();
    const lookup = {
      type: 'function',
      function: { name: 'lookup', description: 'Look a key up.', parameters: { type: 'object' } },
    };
    const first = await chat(id, { model: 'whatever', messages: opening, tools: [lookup] });
    expect(first.status).toBe(200);
    // Forwarded upstream as sent.
    expect(h.double.requests.at(-1)?.body).toMatchObject({ tools: [lookup] });
    expect((await h.store.getTrajectory(id)).trajectory.tools).toEqual([lookup]);

    const { turns } = await h.store.getTrajectory(id);
    const reply = turns[2];
    const history = [
      ...opening,
      { role: 'assistant', content: reply?.content ?? null, tool_calls: reply?.toolCalls },
      { role: 'tool', tool_call_id: reply?.toolCalls?.[0]?.id, content: 'value 4' },
    ];
    const search = { type: 'function', function: { name: 'search' } };
    const second = await chat(id, { model: 'whatever', messages: history, tools: [lookup, search] });
    expect(second.status).toBe(200);
    expect((await h.store.getTrajectory(id)).trajectory.tools).toEqual([lookup, search]);

    const other = await startTrajectory();
    const bad = await chat(other, { model: 'whatever', messages: opening, tools: [{ type: 'web_search' }] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { field: string } }).error.field).toBe('tools');
    expect((await h.store.getTrajectory(other)).trajectory.tools).toBeNull();
  });

  it('records an empty tool list for a trajectory whose requests carry none', async () => {
    const id = await startTrajectory();
    expect((await h.store.getTrajectory(id)).trajectory.tools).toBeNull();
    expect((await chat(id, { model: 'whatever', messages: opening })).status).toBe(200);
    expect((await h.store.getTrajectory(id)).trajectory.tools).toEqual([]);
  });

  it('forwards a call, records the new messages and the reply, and hides what the client did not ask for', async () => {
    const id = await startTrajectory();
    const calls = h.double.requests.length;
    const response = await chat(id, { model: 'whatever', messages: opening });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-edgerl-turn-index')).toBe('2');
    const body = (await response.json()) as {
      choices: Record<string, unknown>[];
      prompt_token_ids?: unknown;
    };
    const choice = body.choices[0] as {
      message: { tool_calls: { id: string; function: { arguments: string } }[] };
      logprobs: unknown;
      token_ids?: unknown;
    };
    expect(choice.message.tool_calls[0]?.function.arguments).toBe('{"key":"ab"}');
    expect(choice.logprobs).toBeNull();
    expect(choice.token_ids).toBeUndefined();
    expect(body.prompt_token_ids).toBeUndefined();
    // Upstream was asked for everything the trainer needs, with the routed model.
    const sent = h.double.requests[calls]?.body;
    expect(sent).toMatchObject({ model: 'tiny-base', logprobs: true, return_token_ids: true });
    const { turns } = await h.store.getTrajectory(id);
    expect(turns.map((turn) => turn.role)).toEqual(['system', 'user', 'assistant']);
    const reply = turns[2];
    const sampled = `<tool_call>{"key":"ab"}</tool_call>`;
    expect(reply?.completionTokenIds).toEqual([...new TextEncoder().encode(sampled)]);
    // logprob of token i is −0.125 − i/1024 in the double.
    expect(reply?.completionLogprobs?.[3]).toBe(-0.125 - 3 / 1024);
    expect(reply?.toolCalls?.[0]?.id).toBe(choice.message.tool_calls[0]?.id);
    expect(reply?.metadata).toMatchObject({
      tokenExact: true,
      recordedBy: 'proxy',
      finishReason: 'tool_calls',
      // What the client asked for: no token limit, and the API's default temperature.
      maxTokens: null,
      temperature: 1,
    });

    // The agent runs the tool itself and calls again with the whole conversation.
    const callId = choice.message.tool_calls[0]?.id as string;
    const next = await chat(id, {
      model: 'whatever',
      logprobs: true,
      return_token_ids: true,
      temperature: 0.5,
      max_completion_tokens: 64,
      messages: [
        ...opening,
        { role: 'assistant', content: null, tool_calls: choice.message.tool_calls },
        { role: 'tool', tool_call_id: callId, content: [{ type: 'text', text: 'value 4' }] },
      ],
    });
    expect(next.status).toBe(200);
    const nextBody = (await next.json()) as {
      choices: { message: { content: string }; logprobs: unknown; token_ids: number[] }[];
    };
    // The double answers by repeating the result; its token ids are the text's UTF-8 bytes.
    expect(nextBody.choices[0]?.message.content).toBe('value 4');
    expect(nextBody.choices[0]?.token_ids).toEqual([...new TextEncoder().encode('value 4')]);
    expect(nextBody.choices[0]?.logprobs).not.toBeNull();
    const after = await h.store.getTrajectory(id);
    expect(after.turns.map((turn) => [turn.role, turn.content])).toEqual([
      ['system', 'You follow keys.'],
      ['user', 'Find the value of key ab.'],
      ['assistant', null],
      ['tool', 'value 4'],
      ['assistant', 'value 4'],
    ]);
    expect(after.turns[3]?.toolCallId).toBe(callId);
    expect(after.turns[4]?.metadata).toMatchObject({ temperature: 0.5, maxTokens: 64 });

    const finished = await h.api(`/v1/trajectories/${id}/finish`, {
      headers: keyHeader(id),
      json: { status: 'finished', reward: 1 },
    });
    expect(finished.status).toBe(200);
    expect(
      ((await finished.json()) as { trajectory: { status: string; verifierReward: number } }).trajectory,
    ).toMatchObject({
      status: 'finished',
      verifierReward: 1,
    });
    const late = await chat(id, { model: 'x', messages: opening });
    // 400, not 409, on the OpenAI-compatible routes: no SDK retries it (error-response.ts, statusOn).
    expect(late.status).toBe(400);
    expect(late.headers.get('x-should-retry')).toBe('false');
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('conflict');
  });

  it('refuses a conversation that rewrites stored history, naming the message', async () => {
    const id = await startTrajectory();
    expect((await chat(id, { model: 'm', messages: opening })).status).toBe(200);
    const rewritten = await chat(id, {
      model: 'm',
      messages: [
        opening[0],
        { role: 'user', content: 'Something else.' },
        { role: 'assistant', content: 'hi' },
      ],
    });
    expect(rewritten.status).toBe(400);
    const error = ((await rewritten.json()) as { error: { field: string; message: string } }).error;
    expect(error.field).toBe('messages.1');
    expect(error.message).toMatch(/differs from stored turn 1 \(content\)/);
  });

  it('passes an upstream error through and records nothing of the call', async () => {
    const id = await startTrajectory();
    h.double.fail({
      kind: 'status',
      status: 429,
      body: { error: { message: 'slow down' } },
      retryAfter: '2',
    });
    const response = await chat(id, { model: 'm', messages: opening });
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({ error: { message: 'slow down' } });
    // The upstream refused the call, so none of it is stored (not even the prompt).
    expect((await h.store.getTrajectory(id)).turns).toEqual([]);
    // The client retries with the same messages: the exchange is recorded once.
    expect((await chat(id, { model: 'm', messages: opening })).status).toBe(200);
    expect((await h.store.getTrajectory(id)).turns.map((turn) => turn.role)).toEqual([
      'system',
      'user',
      'assistant',
    ]);
  });

  it('answers an unreachable upstream with 502 and a malformed one with 502', async () => {
    const id = await startTrajectory();
    h.double.fail({ kind: 'drop' });
    const dropped = await chat(id, { model: 'm', messages: opening });
    expect(dropped.status).toBe(502);
    expect(((await dropped.json()) as { error: { code: string } }).error.code).toBe('bad-gateway');
    h.double.fail({ kind: 'text', body: '{"choices": []}' });
    const malformed = await chat(id, { model: 'm', messages: opening });
    expect(malformed.status).toBe(502);
    expect(((await malformed.json()) as { error: { message: string } }).error.message).toMatch(/choices/);
  });

  it('validates the request: header, messages and n', async () => {
    const id = await startTrajectory();
    const cases: [string | undefined, Record<string, unknown>, string][] = [
      [undefined, { model: 'm', messages: opening }, 'x-edgerl-trajectory'],
      ['not-a-uuid', { model: 'm', messages: opening }, 'x-edgerl-trajectory'],
      [id, { model: 'm', messages: [{ role: 'robot', content: 'hi' }] }, 'messages.0.role'],
      [id, { model: 'm', messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.tool_call_id'],
      [id, { model: 'm', messages: opening, n: 2 }, 'n'],
      [id, { messages: opening }, 'model'],
    ];
    for (const [header, body, field] of cases) {
      const response = await chat(header, body);
      const json = (await response.json()) as { error: { code: string; field: string } };
      expect({ status: response.status, field: json.error.field }).toEqual({ status: 400, field });
    }
    const missing = await chat('00000000-0000-4000-8000-000000000000', { model: 'm', messages: opening });
    expect(missing.status).toBe(404);
  });
});

describe('the recording proxy and the rules of every writer of turns', () => {
  const call = (id: string) => ({ id, type: 'function', function: { name: 'lookup', arguments: '{}' } });

  it('refuses a conversation whose roles cannot be stored, naming the message, and forwards nothing', async () => {
    const cases: [Record<string, unknown>[], string, RegExp][] = [
      [
        [
          ...opening,
          { role: 'assistant', content: null, tool_calls: [call('c1')] },
          { role: 'tool', content: 'x', tool_call_id: 'c9' },
        ],
        'messages.3.tool_call_id',
        /answers no call of the assistant turn before it \(its calls: "c1"\)/,
      ],
      [
        [...opening, { role: 'tool', content: 'x', tool_call_id: 'c1' }],
        'messages.2.tool_call_id',
        /a tool result with no call before it/,
      ],
      [
        [
          ...opening,
          { role: 'assistant', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'c' },
        ],
        'messages.3.role',
        /an assistant turn right after another/,
      ],
      [
        [...opening, { role: 'assistant', content: 'a prefill' }],
        'messages.2.role',
        /ends with an assistant message/,
      ],
    ];
    const calls = h.double.requests.length;
    const answers = [];
    const ids: string[] = [];
    for (const [messages, , message] of cases) {
      // A trajectory per case, so that no case meets another's stored turns (a 409) where the rules are missing.
      ids.push(await startTrajectory());
      const response = await chat(ids.at(-1), { model: 'm', messages });
      const { error } = (await response.json()) as {
        error?: { code: string; field: string; message: string };
      };
      answers.push({
        status: response.status,
        code: error?.code,
        field: error?.field,
        named: message.test(error?.message ?? ''),
      });
    }
    expect(answers).toEqual(
      cases.map(([, field]) => ({ status: 400, code: 'invalid-request', field, named: true })),
    );
    expect(h.double.requests.length).toBe(calls);
    for (const id of ids) expect((await h.store.getTrajectory(id)).turns).toEqual([]);
    // The same conversation in a legal order is recorded.
    const fine = [
      ...opening,
      { role: 'assistant', content: null, tool_calls: [call('c1')] },
      { role: 'tool', content: 'x', tool_call_id: 'c1' },
    ];
    expect((await chat(ids[0], { model: 'm', messages: fine })).status).toBe(200);
  });

  it('refuses a body that is not UTF-8 with the offset of its first bad byte', async () => {
    const id = await startTrajectory();
    const text = JSON.stringify({ model: 'm', messages: opening });
    const at = text.indexOf('keys');
    const body = new Uint8Array([
      ...new TextEncoder().encode(text.slice(0, at)),
      0xff,
      ...new TextEncoder().encode(text.slice(at)),
    ]);
    const response = await h.api('/v1/chat/completions', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...keyHeader(id) },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: unknown }).error).toEqual({
      code: 'invalid-request',
      field: 'body',
      message: `body: invalid UTF-8 at byte ${at}`,
    });
  });

  it('answers 502 for a reply whose logprob no server sends (above 0), storing nothing', async () => {
    const id = await startTrajectory();
    h.double.fail({
      kind: 'text',
      body: JSON.stringify({
        id: 'c',
        object: 'chat.completion',
        model: 'm',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'hi' },
            finish_reason: 'stop',
            logprobs: { content: [{ token: 'hi', logprob: 5 }] },
          },
        ],
      }),
    });
    const response = await chat(id, { model: 'm', messages: opening });
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect({ status: response.status, code: error.code }).toEqual({ status: 502, code: 'bad-gateway' });
    expect(error.message).toMatch(/untokenizedLogprobs\.0: must be ≤ 0/);
    expect((await h.store.getTrajectory(id)).turns).toEqual([]);
  });
});

describe('the recording proxy, streaming', () => {
  async function streamed(id: string, body: Record<string, unknown>) {
    const response = await chat(id, { ...body, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = (await response.text())
      .split('\n\n')
      .filter((block) => block.startsWith('data: '))
      .map((block) => block.slice('data: '.length));
    expect(data.at(-1)).toBe('[DONE]');
    return data
      .slice(0, -1)
      .map((text) => JSON.parse(text) as Record<string, unknown> & { choices: Record<string, unknown>[] });
  }

  it('passes the events through and records the whole reply when the stream ends', async () => {
    const id = await startTrajectory();
    const chunks = await streamed(id, { model: 'm', messages: opening });
    // Only what the client asked for: no ids, no logprobs, no usage chunk.
    expect(chunks.every((chunk) => chunk.choices.length > 0)).toBe(true);
    expect(chunks.some((chunk) => 'prompt_token_ids' in chunk)).toBe(false);
    expect(
      chunks.every((chunk) => chunk.choices.every((choice) => !('token_ids' in choice) && !choice.logprobs)),
    ).toBe(true);
    const argumentsText = chunks
      .flatMap((chunk) => chunk.choices)
      .flatMap(
        (choice) =>
          (choice.delta as { tool_calls?: { function: { arguments?: string } }[] }).tool_calls ?? [],
      )
      .map((call) => call.function.arguments ?? '')
      .join('');
    expect(argumentsText).toBe('{"key":"ab"}');
    const { turns } = await h.store.getTrajectory(id);
    const reply = turns[2];
    expect(reply?.toolCalls).toEqual([
      {
        id: expect.stringMatching(/^call_d\d+$/),
        type: 'function',
        function: { name: 'lookup', arguments: '{"key":"ab"}' },
      },
    ]);
    const sampled = '<tool_call>{"key":"ab"}</tool_call>';
    expect(reply?.completionTokenIds).toEqual([...new TextEncoder().encode(sampled)]);
    expect(reply?.completionLogprobs).toEqual(reply?.completionTokenIds?.map((_, i) => -0.125 - i / 1024));
    // From the usage chunk the proxy asked for on its own account: the double reports 4 prompt tokens.
    expect(reply?.promptTokenCount).toBe(4);
    expect(reply?.metadata).toMatchObject({ streamed: true, tokenExact: true, finishReason: 'tool_calls' });
  });

  it('keeps the extras a streaming client asked for', async () => {
    const id = await startTrajectory();
    const first = await chat(id, { model: 'm', messages: opening });
    const call = ((await first.json()) as { choices: { message: { tool_calls: { id: string }[] } }[] })
      .choices[0]?.message.tool_calls;
    const chunks = await streamed(id, {
      model: 'm',
      logprobs: true,
      return_token_ids: true,
      stream_options: { include_usage: true },
      messages: [
        ...opening,
        { role: 'assistant', content: null, tool_calls: call },
        { role: 'tool', tool_call_id: call?.[0]?.id, content: 'value 8' },
      ],
    });
    expect(chunks[0]?.prompt_token_ids).toBeDefined();
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 4 } });
    const ids = chunks.flatMap((chunk) =>
      chunk.choices.flatMap((choice) => (choice.token_ids as number[] | undefined) ?? []),
    );
    expect(ids).toEqual([...new TextEncoder().encode('value 8')]);
    const { turns } = await h.store.getTrajectory(id);
    expect(turns.map((turn) => [turn.role, turn.content])).toEqual([
      ['system', 'You follow keys.'],
      ['user', 'Find the value of key ab.'],
      ['assistant', null],
      ['tool', 'value 8'],
      ['assistant', 'value 8'],
    ]);
    expect(turns[4]?.completionTokenIds).toEqual([...new TextEncoder().encode('value 8')]);
  });

  it('passes an upstream error through without a stream', async () => {
    const id = await startTrajectory();
    h.double.fail({ kind: 'status', status: 503, body: { error: { message: 'overloaded' } } });
    const response = await chat(id, { model: 'm', messages: opening, stream: true });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ error: { message: 'overloaded' } });
    expect((await h.store.getTrajectory(id)).turns).toEqual([]);
  });
});

describe('the recording proxy and retired versions', () => {
  it('keeps a trajectory on the version it recorded, and refuses the retired version for anything new', async () => {
    const policy = await h.store.createPolicy({ name: 'proxy-retiring', baseModel: 'retiring-base' });
    const old = await h.store.registerPolicyVersion({ policyId: policy.id });
    const next = await h.store.registerPolicyVersion({ policyId: policy.id });
    await h.store.publishPolicyVersion({ versionId: old.id });
    await h.store.publishPolicyVersion({ versionId: next.id, makeDefault: true });
    const routedBefore = await startTrajectory({ env: 'my-agent', policy: 'proxy-retiring@0' });
    const groupBefore = (await (
      await h.api('/v1/groups', {
        json: { env: 'multi-hop', groupSize: 2, taskSeed: 3, policy: 'proxy-retiring@0' },
      })
    ).json()) as { groupId: string };
    // A trajectory that recorded no route (started on the store directly): the proxy routes by name.
    const unrouted = (await h.store.startTrajectory({ env: 'my-agent' })).id;

    await h.store.retirePolicyVersion(old.id);

    const calls = h.double.requests.length;
    // Recorded before the retirement: it keeps its version (version 0, the base weights, served under
    // the base model's name).
    expect((await chat(routedBefore, { model: 'x', messages: opening })).status).toBe(200);
    expect(h.double.requests.slice(calls).map((request) => request.body.model)).toEqual(['retiring-base']);
    // So does a group: a member joining after the retirement takes the group's route.
    const joined = await h.api('/v1/trajectories', { json: { groupId: groupBefore.groupId } });
    expect(joined.status).toBe(201);
    expect(await joined.json()).toMatchObject({
      model: 'retiring-base',
      trajectory: { policyVersionId: old.id },
    });
    // Named for new traffic (before, the proxy sent all three upstream): a 400 naming the version.
    const started = await h.api('/v1/trajectories', {
      json: { env: 'my-agent', policy: 'proxy-retiring@0' },
    });
    expect(await started.json()).toMatchObject({
      error: { field: 'policy', message: 'policy: proxy-retiring@0 is retired; it takes no new traffic' },
    });
    const byHeader = await h.api('/v1/chat/completions', {
      json: { model: 'x', messages: opening },
      headers: { 'x-edgerl-trajectory': unrouted, 'x-edgerl-policy': 'proxy-retiring@0' },
    });
    expect(byHeader.status).toBe(400);
    expect(await byHeader.json()).toMatchObject({
      error: { field: 'x-edgerl-policy', message: expect.stringContaining('proxy-retiring@0 is retired') },
    });
    const byModel = await chat(unrouted, { model: 'proxy-retiring@0', messages: opening });
    expect(byModel.status).toBe(400);
    expect(await byModel.json()).toMatchObject({
      error: { field: 'model', message: expect.stringContaining('proxy-retiring@0 is retired') },
    });
    expect(h.double.requests.length).toBe(calls + 1);
    expect((await h.store.getTrajectory(unrouted)).turns).toEqual([]);
    // The policy's name still reaches its (published) default.
    expect((await chat(unrouted, { model: 'proxy-retiring', messages: opening })).status).toBe(200);
    expect(h.double.requests.at(-1)?.body.model).toBe('proxy-retiring@1');
  });
});

describe('groups of outside agents', () => {
  it('creates an empty group, lets agents join it with its routing, and completes it when the last finishes', async () => {
    const policy = await h.store.createPolicy({ name: 'outside-p', baseModel: 'outside-base' });
    const version = await h.store.registerPolicyVersion({ policyId: policy.id });
    await h.store.publishPolicyVersion({ versionId: version.id, makeDefault: true });
    const created = await h.api('/v1/groups', {
      json: { env: 'multi-hop', groupSize: 2, taskSeed: 8, policy: 'outside-p' },
    });
    expect(created.status).toBe(201);
    const group = (await created.json()) as { groupId: string; task: { prompt: string }; model: string };
    // Its default is version 0, the base weights: served under the base model's name.
    expect(group.model).toBe('outside-base');
    expect(group.task.prompt).toMatch(/^Find the value of key "[a-h]"\.$/);
    const calls = h.double.requests.length;
    for (const reward of [1, 0]) {
      const joined = await h.api('/v1/trajectories', { json: { groupId: group.groupId } });
      expect(joined.status).toBe(201);
      const { trajectory, model, key } = (await joined.json()) as {
        trajectory: { id: string; policyVersionId: string };
        model: string;
        key: string;
      };
      keys.set(trajectory.id, key);
      expect(model).toBe('outside-base');
      expect(trajectory.policyVersionId).toBe(version.id);
      expect(
        (await chat(trajectory.id, { model: 'x', messages: [{ role: 'user', content: group.task.prompt }] }))
          .status,
      ).toBe(200);
      await h.api(`/v1/trajectories/${trajectory.id}/finish`, {
        headers: keyHeader(trajectory.id),
        json: { status: 'finished', reward },
      });
    }
    // No episode ran on the edge: only the two proxied calls reached the endpoint, with the group's model.
    expect(h.double.requests.slice(calls).map((request) => request.body.model)).toEqual([
      'outside-base',
      'outside-base',
    ]);
    const view = (await (await h.api(`/v1/groups/${group.groupId}`)).json()) as {
      group: { status: string };
      progress: { finished: number };
    };
    expect(view.group.status).toBe('complete');
    expect(view.progress.finished).toBe(2);
    // A full group takes nobody else.
    expect((await h.api('/v1/trajectories', { json: { groupId: group.groupId } })).status).toBe(409);
  });
});

describe('trajectory routes', () => {
  it('reads a trajectory with its turns, and validates ids and finish bodies', async () => {
    const id = await startTrajectory({ env: 'my-agent', metadata: { user: 'u1' } });
    const read = await h.api(`/v1/trajectories/${id}`);
    expect(read.status).toBe(200);
    const body = (await read.json()) as {
      trajectory: { env: string; metadata: Record<string, unknown> };
      turns: unknown[];
    };
    expect(body.trajectory.env).toBe('my-agent');
    expect(body.trajectory.metadata).toMatchObject({ user: 'u1', model: 'tiny-base' });
    expect(body.turns).toEqual([]);
    expect((await h.api('/v1/trajectories/nope')).status).toBe(400);
    const noReason = await h.api(`/v1/trajectories/${id}/finish`, {
      headers: keyHeader(id),
      json: { status: 'error' },
    });
    expect(noReason.status).toBe(400);
    expect(((await noReason.json()) as { error: { field: string } }).error.field).toBe('reason');
    const badReward = await h.api(`/v1/trajectories/${id}/finish`, {
      headers: keyHeader(id),
      json: { status: 'finished', reward: 2 },
    });
    expect(((await badReward.json()) as { error: { field: string } }).error.field).toBe('reward');
    const failed = await h.api(`/v1/trajectories/${id}/finish`, {
      headers: keyHeader(id),
      json: { status: 'error', reason: 'agent crashed' },
    });
    expect(failed.status).toBe(200);
    const again = await h.api(`/v1/trajectories/${id}/finish`, {
      headers: keyHeader(id),
      json: { status: 'finished' },
    });
    expect(again.status).toBe(409);
  });

  it("streams a running trajectory's turns as server-sent events until it ends, resuming after Last-Event-ID", async () => {
    h.double.delayMs = 30;
    try {
      const started = await h.api('/v1/rollouts', { json: { env: 'multi-hop', groupSize: 1, taskSeed: 5 } });
      const [id] = ((await started.json()) as { trajectoryIds: string[] }).trajectoryIds as [string];
      const events = await readEvents(await h.api(`/v1/trajectories/${id}/events`));
      const turns = events.filter((event) => event.event === 'turn');
      const { turns: stored } = await h.store.getTrajectory(id);
      expect(turns.map((event) => Number(event.id))).toEqual(stored.map((turn) => turn.index));
      expect(turns.map((event) => (JSON.parse(event.data) as { role: string }).role)).toEqual(
        stored.map((turn) => turn.role),
      );
      const end = events.at(-1);
      expect(end?.event).toBe('end');
      expect((JSON.parse(end?.data ?? '{}') as { status: string }).status).toBe('finished');
      // A reconnecting client gets only what it missed.
      const resumed = await readEvents(
        await h.api(`/v1/trajectories/${id}/events`, { headers: { 'last-event-id': '2' } }),
      );
      expect(resumed.filter((event) => event.event === 'turn').map((event) => Number(event.id))).toEqual(
        stored.slice(3).map((turn) => turn.index),
      );
    } finally {
      h.double.delayMs = 0;
    }
    expect((await h.api('/v1/trajectories/00000000-0000-4000-8000-000000000000/events')).status).toBe(404);
  });
});

interface ServerEvent {
  event: string;
  id?: string;
  data: string;
}

async function readEvents(response: Response): Promise<ServerEvent[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event: ServerEvent = { event: 'message', data: '' };
      for (const line of block.split('\n')) {
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'event') event.event = value;
        else if (field === 'id') event.id = value;
        else if (field === 'data') event.data += value;
      }
      return event;
    });
}
