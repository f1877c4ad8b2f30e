// runEpisode's `resume`: a re-delivered episode continues after the turns already stored, answering
// the last turn's unanswered calls and asking the policy only for what is still missing.
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../protocol/chat.ts';
import { type MultiHopTask, multiHop, multiHopSystemPrompt } from '../environments/multi-hop.ts';
import { ScriptedPolicyClient, textReply, toolCallReply } from '../policy/scripted-policy-client.ts';
import { InMemoryTrajectorySink } from './in-memory-trajectory-sink.ts';
import { runEpisode } from './run-episode.ts';

// ab → cd → 7
const task: MultiHopTask = {
  id: 'mh:ab>cd=7',
  split: 'train',
  prompt: 'Find the value of key ab.',
  start: 'ab',
  table: { xy: '3', cd: '7', ab: 'cd' },
  answer: '7',
  hops: 2,
};

const lookup = (id: string, key: string): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ key }) } }],
});

const opening: ChatMessage[] = [
  { role: 'system', content: multiHopSystemPrompt },
  { role: 'user', content: task.prompt },
];

/** A sink already holding `stored`, as the store would after the first run. */
async function sinkWith(stored: readonly ChatMessage[]): Promise<InMemoryTrajectorySink> {
  const sink = new InMemoryTrajectorySink();
  for (const [index, message] of stored.entries()) {
    await sink.appendTurn({
      trajectoryId: sink.trajectoryId,
      index,
      role: message.role,
      content: message.content,
      ...(message.role === 'assistant' && message.tool_calls ? { toolCalls: message.tool_calls } : {}),
      ...(message.role === 'tool' ? { toolCallId: message.tool_call_id } : {}),
    });
  }
  return sink;
}

const deps = { sleep: async () => {}, random: () => 0.5, now: () => 0 };

describe('runEpisode with resume', () => {
  it('answers the pending call with the tool, then asks the policy only for the rest', async () => {
    const stored = [...opening, lookup('c1', 'ab')];
    const sink = await sinkWith(stored);
    const policy = new ScriptedPolicyClient([
      (request) => {
        // The policy sees the stored history plus the tool result the resumed run wrote.
        expect(request.messages.slice(3)).toEqual([
          { role: 'tool', content: 'next "cd"', tool_call_id: 'c1' },
        ]);
        return toolCallReply([{ name: 'lookup', arguments: { key: 'cd' }, id: 'c2' }]);
      },
      textReply('7'),
    ]);
    const result = await runEpisode({
      environment: multiHop,
      task,
      policy,
      sink,
      model: 'agent@1',
      deps,
      resume: { messages: stored, lastFinishReason: 'tool_calls' },
    });
    policy.assertDone();
    expect(result).toMatchObject({ status: 'finished', reward: 1, turns: 7 });
    expect(sink.turns.map((turn) => [turn.index, turn.role, turn.content])).toEqual([
      [0, 'system', multiHopSystemPrompt],
      [1, 'user', task.prompt],
      [2, 'assistant', null],
      [3, 'tool', 'next "cd"'],
      [4, 'assistant', null],
      [5, 'tool', 'value "7"'],
      [6, 'assistant', '7'],
    ]);
  });

  it('finishes without a policy call when the stored last turn was the answer', async () => {
    const stored = [
      ...opening,
      lookup('c1', 'ab'),
      { role: 'tool' as const, content: 'next "cd"', tool_call_id: 'c1' },
      lookup('c2', 'cd'),
      { role: 'tool' as const, content: 'value "7"', tool_call_id: 'c2' },
      { role: 'assistant' as const, content: '7' },
    ];
    const sink = await sinkWith(stored);
    const policy = new ScriptedPolicyClient([]);
    const result = await runEpisode({
      environment: multiHop,
      task,
      policy,
      sink,
      model: 'agent@1',
      deps,
      resume: { messages: stored, lastFinishReason: 'stop' },
    });
    policy.assertDone();
    expect(result).toMatchObject({ status: 'finished', reward: 1, turns: 7 });
    expect(sink.end).toMatchObject({ status: 'finished', verifierReward: 1 });
  });

  it('counts the stored assistant turns against the turn limit', async () => {
    const limited = { ...multiHop, maxTurns: 1 };
    const stored = [...opening, lookup('c1', 'ab')];
    const sink = await sinkWith(stored);
    const result = await runEpisode({
      environment: limited,
      task,
      policy: new ScriptedPolicyClient([]),
      sink,
      model: 'agent@1',
      deps,
      resume: { messages: stored, lastFinishReason: 'tool_calls' },
    });
    expect(result).toMatchObject({ status: 'truncated', turns: 4 });
  });

  it("re-writes a stored opening idempotently and refuses a history that is not this task's", async () => {
    const partial = await sinkWith(opening.slice(0, 1));
    const resumed = await runEpisode({
      environment: multiHop,
      task,
      policy: new ScriptedPolicyClient([textReply('7')]),
      sink: partial,
      model: 'agent@1',
      deps,
      resume: { messages: opening.slice(0, 1) },
    });
    expect(resumed).toMatchObject({ status: 'finished', turns: 3 });
    const foreign = [
      opening[0] as ChatMessage,
      { role: 'user' as const, content: 'Find the value of key zz.' },
      { role: 'assistant' as const, content: '1' },
    ];
    const sink = await sinkWith(foreign);
    const result = await runEpisode({
      environment: multiHop,
      task,
      policy: new ScriptedPolicyClient([]),
      sink,
      model: 'agent@1',
      deps,
      resume: { messages: foreign },
    });
    expect(result).toMatchObject({
      status: 'error',
      errorReason: "resume: stored turn 1 is not this task's opening message",
    });
  });
});
