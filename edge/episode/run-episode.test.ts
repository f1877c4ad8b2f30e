import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineEnvironment } from '../environments/environment.ts';
import { type MultiHopTask, multiHop } from '../environments/multi-hop.ts';
import { defineTool } from '../environments/tool.ts';
import { ToolRefusal } from '../environments/tool-refusal.ts';
import { PolicyError } from '../policy/policy-error.ts';
import { ScriptedPolicyClient, textReply, toolCallReply } from '../policy/scripted-policy-client.ts';
import type { EpisodeEvent } from './episode-events.ts';
import { EpisodeSetupError } from './episode-setup-error.ts';
import { InMemoryTrajectorySink } from './in-memory-trajectory-sink.ts';
import { type RunEpisodeOptions, runEpisode } from './run-episode.ts';
import { errorMessage } from '../../protocol/error-message.ts';

// A hand-made two-hop task: ab → cd → 7, with one distractor.
const task: MultiHopTask = {
  id: 'mh:ab>cd=7',
  split: 'train',
  prompt: 'Find the value of key ab.',
  start: 'ab',
  table: { xy: '3', cd: '7', ab: 'cd' },
  answer: '7',
  hops: 2,
};

interface Harness {
  sink: InMemoryTrajectorySink;
  events: EpisodeEvent[];
  sleeps: number[];
}

function harness(sink = new InMemoryTrajectorySink()): Harness & {
  options: Pick<RunEpisodeOptions<MultiHopTask>, 'sink' | 'model' | 'onEvent' | 'deps'>;
} {
  const events: EpisodeEvent[] = [];
  const sleeps: number[] = [];
  return {
    sink,
    events,
    sleeps,
    options: {
      sink,
      model: 'agent@1',
      onEvent: (event) => events.push(event),
      // No real waiting: record the backoff delays; random() = 0.5 puts each at half its cap.
      deps: { sleep: async (ms) => void sleeps.push(ms), random: () => 0.5, now: () => 0 },
    },
  };
}

describe('runEpisode on multi-hop', () => {
  it('follows two lookups to the answer, writing every turn in order with its token data', async () => {
    const policy = new ScriptedPolicyClient([
      toolCallReply([{ name: 'lookup', arguments: { key: 'ab' }, id: 'c1' }], {
        completionTokenIds: [11, 12, 13],
        completionLogprobs: [-0.1, -0.2, -0.3],
        promptTokenIds: [1, 2],
        promptTokenCount: 2,
        servedBy: 'agent@1',
      }),
      toolCallReply([{ name: 'lookup', arguments: { key: 'cd' } }]),
      textReply('7'),
    ]);
    const h = harness();
    const result = await runEpisode({ environment: multiHop, task, policy, ...h.options });
    policy.assertDone();

    expect(result).toMatchObject({ status: 'finished', reward: 1, turns: 7 });
    expect(h.sink.end).toEqual({ status: 'finished', verifierReward: 1, detail: 'correct' });
    const turns = h.sink.turns;
    expect(turns.map((turn) => turn.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(turns.map((turn) => turn.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(turns[1]?.content).toBe(task.prompt);
    // The model's id is kept; the second call had none, so the loop named it after its turn index (4).
    expect(turns[3]).toMatchObject({ toolCallId: 'c1', content: 'next "cd"' });
    expect(turns[4]?.toolCalls?.[0]?.id).toBe('call_4_1');
    expect(turns[5]).toMatchObject({ toolCallId: 'call_4_1', content: 'value "7"' });
    expect(turns[5]?.toolError).toBeUndefined();
    // Token-exact first assistant turn; the second had no ids.
    expect(turns[2]).toMatchObject({
      completionTokenIds: [11, 12, 13],
      completionLogprobs: [-0.1, -0.2, -0.3],
      promptTokenCount: 2,
      servedBy: 'agent@1',
      metadata: { tokenExact: true, finishReason: 'tool_calls', attempts: 1 },
    });
    expect(turns[2]?.metadata).not.toHaveProperty('promptTokenIds'); // count only: ids would grow quadratically
    expect(turns[4]?.metadata).toMatchObject({ tokenExact: false });

    // The policy saw the tool results and the tool list.
    expect(policy.requests[2]?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_4_1',
      content: 'value "7"',
    });
    expect(policy.requests[0]?.tools.map((tool) => tool.function.name)).toEqual(['lookup']);
    expect(policy.requests[0]?.model).toBe('agent@1');
    expect(policy.requests[0]?.toolChoice).toBe('auto');

    expect(h.events.map((event) => event.type)).toEqual([
      'episode-start',
      ...Array<string>(7).fill('turn-end'),
      'episode-end',
    ]);
  });

  it('scores a wrong answer 0 and says why', async () => {
    const policy = new ScriptedPolicyClient([
      toolCallReply([{ name: 'lookup', arguments: { key: 'ab' } }]),
      textReply('3'),
    ]);
    const h = harness();
    const result = await runEpisode({ environment: multiHop, task, policy, ...h.options });
    expect(result).toMatchObject({ status: 'finished', reward: 0, detail: 'answered 3, expected 7' });
  });

  it('records a malformed call, an unknown tool and invalid arguments as observations and goes on', async () => {
    const policy = new ScriptedPolicyClient([
      toolCallReply([
        { name: 'lookup', arguments: '{"key": ', id: 'm1' },
        { name: 'search', arguments: { q: 'ab' }, id: 'm2' },
        { name: 'lookup', arguments: { key: 5 }, id: 'm3' },
        { name: 'lookup', arguments: '[1]', id: 'm4' },
      ]),
      toolCallReply([{ name: 'lookup', arguments: { key: 'ab' } }]),
      toolCallReply([{ name: 'lookup', arguments: { key: 'cd' } }]),
      textReply('7'),
    ]);
    const h = harness();
    const result = await runEpisode({ environment: multiHop, task, policy, ...h.options });
    policy.assertDone();
    expect(result).toMatchObject({ status: 'finished', reward: 1 });

    const toolTurns = h.sink.turns.filter((turn) => turn.role === 'tool');
    expect(toolTurns.slice(0, 4).map((turn) => [turn.toolCallId, turn.toolError])).toEqual([
      ['m1', 'malformed-call'],
      ['m2', 'unknown-tool'],
      ['m3', 'invalid-arguments'],
      ['m4', 'malformed-call'],
    ]);
    const errors = toolTurns.slice(0, 4).map((turn) => JSON.parse(turn.content ?? '').error as string);
    expect(errors[0]).toMatch(/not valid JSON/);
    expect(errors[1]).toBe('unknown tool "search"; available: lookup');
    expect(errors[2]).toMatch(/^invalid arguments for lookup: key: /);
    expect(errors[3]).toBe('arguments must be a JSON object, got an array');
    const toolErrorEvents = h.events.filter((event) => event.type === 'tool-error');
    expect(toolErrorEvents.map((event) => event.code)).toEqual([
      'malformed-call',
      'unknown-tool',
      'invalid-arguments',
      'malformed-call',
    ]);
  });

  it('truncates at the turn limit after running the last turn’s tools, and the verifier scores 0', async () => {
    // Five lookups that go in a circle; maxTurns is 5, so a sixth policy call would be unexpected.
    const steps = ['ab', 'cd', 'xy', 'ab', 'cd'].map((key) =>
      toolCallReply([{ name: 'lookup', arguments: { key } }]),
    );
    const policy = new ScriptedPolicyClient(steps);
    const h = harness();
    const result = await runEpisode({ environment: multiHop, task, policy, ...h.options });
    policy.assertDone();
    expect(result).toMatchObject({ status: 'truncated', reward: 0 });
    expect(h.sink.end).toEqual({
      status: 'truncated',
      verifierReward: 0,
      detail: 'truncated: turn-limit; no final answer',
    });
    // 2 opening turns + 5 × (assistant + tool) = 12, the last one a tool turn.
    expect(h.sink.turns).toHaveLength(12);
    expect(h.sink.turns.at(-1)?.role).toBe('tool');
  });

  it('treats a reply cut off by the token limit as truncated, not as an answer', async () => {
    const policy = new ScriptedPolicyClient([textReply('The value is', { finishReason: 'length' })]);
    const h = harness();
    const result = await runEpisode({ environment: multiHop, task, policy, ...h.options });
    expect(result).toMatchObject({
      status: 'truncated',
      reward: 0,
      detail: 'truncated: max-tokens; no final answer',
    });
  });

  it('retries a failing endpoint with capped, jittered backoff, then ends in error keeping earlier turns', async () => {
    const unavailable = () => new PolicyError('http', 'HTTP 503 from the policy endpoint', { status: 503 });
    const policy = new ScriptedPolicyClient([
      toolCallReply([{ name: 'lookup', arguments: { key: 'ab' } }]),
      unavailable(),
      new PolicyError('network', 'connection refused'),
      new PolicyError('timeout', 'no answer within 60000 ms'),
      unavailable(),
    ]);
    const h = harness();
    const result = await runEpisode({ environment: multiHop, task, policy, ...h.options });
    policy.assertDone();
    expect(result.status).toBe('error');
    expect(result.errorReason).toBe('policy: HTTP 503 from the policy endpoint (after 4 attempts)');
    expect(h.sink.end).toEqual({ status: 'error', errorReason: result.errorReason });
    expect(h.sink.turns.map((turn) => turn.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    // Full jitter with random() = 0.5: 0.5 × min(8000, 500 · 2^(n−1)) for retries n = 1, 2, 3.
    expect(h.sleeps).toEqual([250, 500, 1000]);
    expect(h.events.filter((event) => event.type === 'policy-retry')).toHaveLength(3);
  });

  it('recovers when a retry succeeds, and does not retry a request the endpoint rejects', async () => {
    const recovering = new ScriptedPolicyClient([
      new PolicyError('http', 'HTTP 429', { status: 429, retryAfterMs: 2_000 }),
      toolCallReply([{ name: 'lookup', arguments: { key: 'ab' } }]),
      toolCallReply([{ name: 'lookup', arguments: { key: 'cd' } }]),
      textReply('7'),
    ]);
    const h = harness();
    const ok = await runEpisode({ environment: multiHop, task, policy: recovering, ...h.options });
    expect(ok).toMatchObject({ status: 'finished', reward: 1 });
    // Retry-After (2000 ms) is a floor over the jittered 250 ms.
    expect(h.sleeps).toEqual([2_000]);
    expect(h.sink.turns[2]?.metadata).toMatchObject({ attempts: 2 });

    const rejecting = new ScriptedPolicyClient([
      new PolicyError('http', 'HTTP 400: unknown model', { status: 400 }),
    ]);
    const h2 = harness();
    const failed = await runEpisode({ environment: multiHop, task, policy: rejecting, ...h2.options });
    rejecting.assertDone();
    expect(failed).toMatchObject({
      status: 'error',
      errorReason: 'policy: HTTP 400: unknown model (after 1 attempt)',
    });
    expect(h2.sleeps).toEqual([]);
    expect(h2.sink.turns).toHaveLength(2);
  });

  it('ends in error when the store keeps refusing a turn, and retries a store hiccup', async () => {
    const failing = new InMemoryTrajectorySink(undefined, {
      appendTurn: (turn) => (turn.index === 3 ? new Error('connection reset') : undefined),
    });
    const policy = new ScriptedPolicyClient([toolCallReply([{ name: 'lookup', arguments: { key: 'ab' } }])]);
    const h = harness(failing);
    const result = await runEpisode({ environment: multiHop, task, policy, ...h.options });
    // Turn 3 is the tool result of the step that begins at the assistant turn 2: the step is one
    // append, so neither is kept.
    expect(result).toMatchObject({
      status: 'error',
      errorReason: 'store: turns 2-3 not written: connection reset',
    });
    expect(failing.turns).toHaveLength(2);
    expect(failing.end?.status).toBe('error');

    const flaky = new InMemoryTrajectorySink(undefined, {
      appendTurn: (turn, attempt) =>
        turn.index === 1 && attempt === 1 ? new Error('deadlock detected') : undefined,
    });
    const h2 = harness(flaky);
    const policy2 = new ScriptedPolicyClient([textReply('7')]);
    const ok = await runEpisode({ environment: multiHop, task, policy: policy2, ...h2.options });
    expect(ok).toMatchObject({ status: 'finished', turns: 3 });
    expect(h2.sleeps).toEqual([250]);
  });

  it('ignores an observer that throws', async () => {
    const policy = new ScriptedPolicyClient([textReply('7')]);
    const h = harness();
    const result = await runEpisode({
      environment: multiHop,
      task,
      policy,
      ...h.options,
      onEvent: () => {
        throw new Error('observer bug');
      },
    });
    expect(result.status).toBe('finished');
  });

  it('ends in error with reason cancelled when its signal aborts', async () => {
    const controller = new AbortController();
    const policy = new ScriptedPolicyClient([
      (request) => {
        controller.abort();
        return request.signal.aborted
          ? new PolicyError('cancelled', 'cancelled')
          : toolCallReply([{ name: 'lookup', arguments: { key: 'ab' } }]);
      },
    ]);
    const h = harness();
    const result = await runEpisode({
      environment: multiHop,
      task,
      policy,
      ...h.options,
      signal: controller.signal,
    });
    expect(result).toMatchObject({ status: 'error', errorReason: 'cancelled' });
  });

  // A task of the wrong shape is refused where it is read from outside (run-queued-episode.ts, tested
  // in test/edge/consume-episode.test.ts): the loop takes a typed task and does not check it again.
  it('refuses to start without a capability the environment needs, before writing anything', async () => {
    const policy = new ScriptedPolicyClient([]);
    const h = harness();
    const needsSql = defineEnvironment({ ...multiHop, name: 'needs-sql', requires: ['sql'] });
    const error = await runEpisode({ environment: needsSql, task, policy, ...h.options }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EpisodeSetupError);
    expect((error as EpisodeSetupError).code).toBe('missing-capability');
    expect(errorMessage(error)).toBe('environment needs-sql needs capabilities.sql');
    expect(h.sink.turns).toHaveLength(0);
    policy.assertDone();
  });
});

describe('runEpisode tool failures', () => {
  interface PlainTask {
    id: string;
    split: 'train' | 'eval';
    prompt: string;
  }
  const plainTask: PlainTask = { id: 't1', split: 'train', prompt: 'go' };
  const environment = defineEnvironment<PlainTask>({
    name: 'tool-failures',
    description: 'tools that fail in every way',
    systemPrompt: '',
    maxTurns: 3,
    taskSchema: z.object({ id: z.string(), split: z.enum(['train', 'eval']), prompt: z.string() }),
    sampleTask: () => plainTask,
    tools: [
      defineTool({
        name: 'boom',
        description: 'throws',
        parameters: z.object({}),
        run: () => {
          throw new Error('disk on fire');
        },
      }),
      defineTool({
        name: 'hang',
        description: 'never returns and ignores its signal',
        parameters: z.object({}),
        timeoutMs: 5,
        run: () => new Promise(() => {}),
      }),
      defineTool({
        name: 'refuse',
        description: 'declines',
        parameters: z.object({}),
        run: () => {
          throw new ToolRefusal('not allowed here');
        },
      }),
      defineTool({
        name: 'add',
        description: 'adds two integers (plain JSON schema parameters)',
        parameters: {
          type: 'object',
          properties: { a: { type: 'integer' }, b: { type: 'integer' } },
          required: ['a', 'b'],
        },
        run: (args: Record<string, unknown>) => ({ sum: Number(args.a) + Number(args.b) }),
      }),
    ],
  });

  it('turns a throw, a timeout, a refusal and schema failures into coded observations', async () => {
    const policy = new ScriptedPolicyClient([
      toolCallReply([
        { name: 'boom', arguments: {}, id: 'a' },
        { name: 'hang', arguments: {}, id: 'b' },
        { name: 'refuse', arguments: {}, id: 'c' },
        { name: 'add', arguments: { a: 2 }, id: 'd' },
        { name: 'add', arguments: { a: 2, b: 3 }, id: 'e' },
      ]),
      textReply('done'),
    ]);
    const h = harness();
    const result = await runEpisode({ environment, task: plainTask, policy, ...h.options });
    policy.assertDone();
    // No verifier: the trajectory finishes without a reward, and without a system turn (empty prompt).
    expect(result).toMatchObject({ status: 'finished', turns: 8 });
    expect(result.reward).toBeUndefined();
    expect(h.sink.turns[0]?.role).toBe('user');
    const tools = h.sink.turns.filter((turn) => turn.role === 'tool');
    expect(tools.map((turn) => [turn.toolCallId, turn.toolError ?? null, turn.content])).toEqual([
      ['a', 'tool-error', JSON.stringify({ error: 'boom failed: disk on fire' })],
      ['b', 'tool-timeout', JSON.stringify({ error: 'hang did not finish within 5 ms' })],
      ['c', 'refused', JSON.stringify({ error: 'not allowed here' })],
      ['d', 'invalid-arguments', expect.stringMatching(/invalid arguments for add: b: /)],
      ['e', null, '{"sum":5}'],
    ]);
    expect(tools.every((turn) => turn.metadata?.toolName !== undefined)).toBe(true);
  });
});

describe('runEpisode with guided tool calls', () => {
  it("asks every turn with the environment's tool_choice and strict specs, and truncates at maxTurns", async () => {
    const guided = defineEnvironment({ ...multiHop, toolChoice: 'required', strictTools: true, maxTurns: 2 });
    const policy = new ScriptedPolicyClient([
      toolCallReply([{ name: 'lookup', arguments: { key: 'ab' } }]),
      toolCallReply([{ name: 'lookup', arguments: { key: 'cd' } }]),
    ]);
    const h = harness();
    const result = await runEpisode({ environment: guided, task, policy, ...h.options });
    policy.assertDone();
    expect(result.status).toBe('truncated');
    expect(policy.requests.map((request) => [request.toolChoice, request.strictTools])).toEqual([
      ['required', true],
      ['required', true],
    ]);
  });
});
