// The bounds a hostile policy meets in the episode loop: tool calls per turn, tool time per episode,
// reply bytes and token ids (episode-defaults.ts `episodeBoundDefaults`).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sequenceIssues } from '../../protocol/validate-turns.ts';
import { defineEnvironment } from '../environments/environment.ts';
import { defineTool } from '../environments/tool.ts';
import { ScriptedPolicyClient, textReply, toolCallReply } from '../policy/scripted-policy-client.ts';
import { InMemoryTrajectorySink } from './in-memory-trajectory-sink.ts';
import { runEpisode } from './run-episode.ts';

interface PlainTask {
  id: string;
  split: 'train' | 'eval';
  prompt: string;
}
const task: PlainTask = { id: 't1', split: 'train', prompt: 'go' };

/** `echo` returns at once; `slow` advances the fake clock by 40 ms per call. */
function setup() {
  const clock = { ms: 0, runs: 0 };
  const environment = defineEnvironment<PlainTask>({
    name: 'bounds',
    description: 'cheap and slow tools',
    systemPrompt: '',
    maxTurns: 5,
    taskSchema: z.object({ id: z.string(), split: z.enum(['train', 'eval']), prompt: z.string() }),
    sampleTask: () => task,
    tools: [
      defineTool({
        name: 'echo',
        description: 'echoes',
        parameters: z.object({ n: z.number() }),
        run: ({ n }) => {
          clock.runs += 1;
          return { n };
        },
      }),
      defineTool({
        name: 'slow',
        description: 'takes 40 ms of tool time',
        parameters: z.object({}),
        run: () => {
          clock.runs += 1;
          clock.ms += 40;
          return 'ok';
        },
      }),
    ],
  });
  const sink = new InMemoryTrajectorySink();
  const deps = { sleep: async () => {}, random: () => 0.5, now: () => clock.ms };
  return { clock, environment, sink, deps };
}

describe('the tool-call bound per turn', () => {
  it('runs the first N calls of a 5,000-call reply and answers the rest with one refusal; the episode goes on', async () => {
    const { clock, environment, sink, deps } = setup();
    const calls = Array.from({ length: 5000 }, (_, n) => ({ name: 'echo', arguments: { n }, id: `c${n}` }));
    const policy = new ScriptedPolicyClient([toolCallReply(calls), textReply('done')]);
    const result = await runEpisode({
      environment,
      task,
      policy,
      sink,
      model: 'm',
      deps,
      settings: { maxToolCallsPerTurn: 3 },
    });
    policy.assertDone();
    expect(clock.runs).toBe(3);
    // user, assistant, 3 results, 1 refusal, final assistant: 7 turns, not 5,003.
    expect(result).toMatchObject({ status: 'finished', turns: 7 });
    const assistant = sink.turns[1];
    expect(assistant?.toolCalls?.map((call) => call.id)).toEqual(['c0', 'c1', 'c2', 'c3']);
    const tools = sink.turns.filter((turn) => turn.role === 'tool');
    expect(tools.map((turn) => [turn.toolCallId, turn.toolError ?? null])).toEqual([
      ['c0', null],
      ['c1', null],
      ['c2', null],
      ['c3', 'call-limit'],
    ]);
    expect(tools[3]?.content).toContain('made 5000 tool calls and at most 3 run per turn');
    expect(tools[3]?.content).toContain('4996 after it were refused');
    // Every stored call is answered, in order: a history chat APIs accept.
    expect(sequenceIssues(sink.turns).issues).toEqual([]);
    // The next request carries the stored (bounded) message, not the 5,000 calls.
    const second = policy.requests[1]?.messages.find((message) => message.role === 'assistant');
    expect(second?.role === 'assistant' && second.tool_calls?.length).toBe(4);
  });

  it('counts calls by position, so calls that share one id are bounded too', async () => {
    const { clock, environment, sink, deps } = setup();
    const calls = Array.from({ length: 40 }, (_, n) => ({ name: 'echo', arguments: { n }, id: 'same' }));
    const policy = new ScriptedPolicyClient([toolCallReply(calls), textReply('done')]);
    const result = await runEpisode({
      environment,
      task,
      policy,
      sink,
      model: 'm',
      deps,
      settings: { maxToolCallsPerTurn: 3 },
    });
    expect(clock.runs).toBe(3);
    // Only the bound's work ran. (Such a history answers one id twice, which the turn rules refuse:
    // the episode then ends `error` with that reason, protocol/validate-turns.ts.)
    expect(result.turns).toBeLessThanOrEqual(2);
  });

  it('runs every call at the bound exactly', async () => {
    const { clock, environment, sink, deps } = setup();
    const calls = Array.from({ length: 3 }, (_, n) => ({ name: 'echo', arguments: { n }, id: `c${n}` }));
    const policy = new ScriptedPolicyClient([toolCallReply(calls), textReply('done')]);
    await runEpisode({
      environment,
      task,
      policy,
      sink,
      model: 'm',
      deps,
      settings: { maxToolCallsPerTurn: 3 },
    });
    expect(clock.runs).toBe(3);
    expect(sink.turns.filter((turn) => turn.toolError).length).toBe(0);
  });
});

describe('the tool-time bound per episode', () => {
  it('refuses calls once the episode has spent its tool time, and the model still answers', async () => {
    const { clock, environment, sink, deps } = setup();
    const slow = (id: string) => ({ name: 'slow', arguments: {}, id });
    const policy = new ScriptedPolicyClient([
      toolCallReply([slow('a'), slow('b'), slow('c')]),
      toolCallReply([slow('d')]),
      textReply('done'),
    ]);
    const result = await runEpisode({
      environment,
      task,
      policy,
      sink,
      model: 'm',
      deps,
      settings: { toolBudgetMs: 100 },
    });
    policy.assertDone();
    // 40 + 40 = 80 < 100 ran; the third ran (20 ms left) to 120; then nothing more runs.
    expect(clock.runs).toBe(3);
    expect(result.status).toBe('finished');
    const tools = sink.turns.filter((turn) => turn.role === 'tool');
    expect(tools.map((turn) => turn.toolError ?? null)).toEqual([null, null, null, 'tool-budget']);
    expect(tools[3]?.content).toContain('spent its tool time (100 ms)');
  });
});

describe('the tool-time bound on a resumed episode', () => {
  it('counts the tool time its stored turns took', async () => {
    const { clock, environment, sink, deps } = setup();
    const policy = new ScriptedPolicyClient([
      toolCallReply([{ name: 'slow', arguments: {}, id: 'b' }]),
      textReply('done'),
    ]);
    // The stored turns the resumed run continues after, with the 100 ms the first call took.
    const call = { id: 'a', type: 'function' as const, function: { name: 'slow', arguments: '{}' } };
    await sink.appendTurns([
      { trajectoryId: sink.trajectoryId, index: 0, role: 'user', content: 'go' },
      { trajectoryId: sink.trajectoryId, index: 1, role: 'assistant', content: null, toolCalls: [call] },
      {
        trajectoryId: sink.trajectoryId,
        index: 2,
        role: 'tool',
        content: 'ok',
        toolCallId: 'a',
        latencyMs: 100,
      },
    ]);
    const result = await runEpisode({
      environment,
      task,
      policy,
      sink,
      model: 'm',
      deps,
      settings: { toolBudgetMs: 100 },
      resume: {
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', content: 'ok', tool_call_id: 'a' },
        ],
        toolMs: 100,
      },
    });
    expect(result.errorReason).toBeUndefined();
    expect(clock.runs).toBe(0);
    expect(sink.turns.find((turn) => turn.toolCallId === 'b')?.toolError).toBe('tool-budget');
  });
});

describe('the reply bounds', () => {
  it('ends the episode `error` without storing a reply over maxReplyBytes', async () => {
    const { environment, sink, deps } = setup();
    const policy = new ScriptedPolicyClient([textReply('é'.repeat(600))]);
    const result = await runEpisode({
      environment,
      task,
      policy,
      sink,
      model: 'm',
      deps,
      settings: { maxReplyBytes: 1000 },
    });
    expect(result.status).toBe('error');
    expect(result.errorReason).toMatch(/reply-too-large: the reply is 1200 bytes .* over the bound of 1000/);
    expect(sink.turns.map((turn) => turn.role)).toEqual(['user']);
    expect(sink.end?.status).toBe('error');
  });

  it('counts tool-call arguments toward the bound', async () => {
    const { environment, sink, deps } = setup();
    const policy = new ScriptedPolicyClient([
      toolCallReply([{ name: 'echo', arguments: { n: 1, pad: 'x'.repeat(2000) }, id: 'a' }]),
    ]);
    const result = await runEpisode({
      environment,
      task,
      policy,
      sink,
      model: 'm',
      deps,
      settings: { maxReplyBytes: 1000 },
    });
    expect(result.errorReason).toMatch(/reply-too-large/);
  });

  it('ends the episode `error` at once on a token id ≥ 2^31, naming the id and its position', async () => {
    const { environment, sink, deps } = setup();
    const policy = new ScriptedPolicyClient([
      textReply('hi', { completionTokenIds: [5, 2 ** 31], completionLogprobs: [-0.1, -0.2] }),
    ]);
    const result = await runEpisode({ environment, task, policy, sink, model: 'm', deps });
    policy.assertDone();
    expect(result.status).toBe('error');
    expect(result.errorReason).toBe(
      'policy: invalid-token-id: completion token 1 is 2147483648, outside [0, 2147483648) (the int4 column)',
    );
    expect(sink.end?.status).toBe('error');
  });

  it('holds ids to the vocabulary size when it is known', async () => {
    const { environment, sink, deps } = setup();
    const policy = new ScriptedPolicyClient([textReply('hi', { completionTokenIds: [3, 99, 100] })]);
    const result = await runEpisode({
      environment,
      task,
      policy,
      sink,
      model: 'm',
      deps,
      settings: { vocabSize: 100 },
    });
    expect(result.errorReason).toBe(
      'policy: invalid-token-id: completion token 2 is 100, outside [0, 100) (the vocabulary size)',
    );
  });
});
