import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ChatMessage } from '../../protocol/chat.ts';
import { InMemoryTrajectorySink } from '../episode/in-memory-trajectory-sink.ts';
import { runEpisode } from '../episode/run-episode.ts';
import { ScriptedPolicyClient } from '../policy/scripted-policy-client.ts';
import { hashString } from './hash-string.ts';
import { seededRandom } from './seeded-random.ts';
import {
  giveUpAnswer,
  lookupResult,
  type MultiHopTask,
  multiHop,
  parseMultiHopAnswer,
  solve,
} from './multi-hop.ts';

/** Follows the table from the start key, independently of the tool and the solver. */
function walk(task: MultiHopTask): { hops: number; value: string } {
  let key = task.start;
  for (let hops = 1; hops <= 10; hops++) {
    const next = task.table[key];
    if (next === undefined) throw new Error(`chain breaks at ${key}`);
    if (/^[0-9]$/.test(next)) return { hops, value: next };
    key = next;
  }
  throw new Error('cycle');
}

describe('multi-hop tasks', () => {
  it('draws the same task from the same seed, valid and reachable in exactly its hop count', () => {
    expect(multiHop.sampleTask('train', 5)).toEqual(multiHop.sampleTask('train', 5));
    const tasks = [...multiHop.tasks('train', 100, 1), ...multiHop.tasks('eval', 100, 1)];
    // 8·7·10 two-hop and 8·7·6·10 three-hop chains: 3,920 tasks, so 200 draws repeat a few (~16 here).
    expect(new Set(tasks.map((task) => task.id)).size).toBeGreaterThan(170);
    for (const task of tasks) {
      expect(multiHop.taskSchema.safeParse(task).success).toBe(true);
      expect(walk(task)).toEqual({ hops: task.hops, value: task.answer });
      expect(task.prompt).toBe(`Find the value of key "${task.start}".`);
    }
    const hopCounts = new Set(tasks.map((task) => task.hops));
    expect([...hopCounts].sort()).toEqual([2, 3]);
  });

  it('keeps train, validation and eval disjoint, each task in the split its id hashes to', () => {
    const train = multiHop.tasks('train', 400, 11);
    const evalTasks = multiHop.tasks('eval', 400, 11);
    const validation = multiHop.tasks('validation', 200, 11);
    const trainIds = new Set(train.map((task) => task.id));
    const evalIds = new Set(evalTasks.map((task) => task.id));
    expect(evalTasks.some((task) => trainIds.has(task.id))).toBe(false);
    expect(validation.some((task) => trainIds.has(task.id) || evalIds.has(task.id))).toBe(false);
    // FNV-1a(id) mod 1000: below 50 validation, 50–199 eval, the rest train (recomputed from the hash
    // alone): train is the 80% it was before validation was carved out of the held-out fifth.
    const expected = (id: string) => {
      const bucket = hashString(id) % 1000;
      return bucket < 50 ? 'validation' : bucket < 200 ? 'eval' : 'train';
    };
    for (const task of [...train, ...evalTasks, ...validation]) expect(expected(task.id)).toBe(task.split);
  });

  it('accepts the bare value and common wrappings, nothing else', () => {
    for (const text of ['7', ' 7\n', 'ANSWER: 7', 'answer 7', 'value 7', 'value "7"', '7.'])
      expect(parseMultiHopAnswer(text)).toBe('7');
    for (const text of ['77', 'the answer is 7', '', 'seven', '"7', 'value "77"'])
      expect(parseMultiHopAnswer(text)).toBeUndefined();
  });

  it('answers unknown keys with nothing and known ones as next/value', () => {
    const table = { ab: 'cd', cd: '4' };
    expect(lookupResult(table, 'ab')).toBe('next "cd"');
    expect(lookupResult(table, 'cd')).toBe('value "4"');
    expect(lookupResult(table, 'zz')).toBeUndefined();
    expect(lookupResult(table, 'toString')).toBeUndefined();
  });
});

describe('the verifier', () => {
  const task = multiHop.sampleTask('train', 9);
  const wrong = String((Number(task.answer) + 1) % 10);
  const verify = (messages: ChatMessage[], finalAnswer: string | null) =>
    multiHop.verify?.(
      { task, messages, finalAnswer, status: 'finished' },
      { signal: new AbortController().signal },
    );

  it('rewards the right digit only when a lookup returned it', async () => {
    const followed = solve(task);
    expect(await verify(followed, task.answer)).toEqual({ reward: 1, detail: 'correct' });
    expect(await verify(followed, wrong)).toEqual({
      reward: 0,
      detail: `answered ${wrong}, expected ${task.answer}`,
    });
    const guessed: ChatMessage[] = [...followed.slice(0, 2), { role: 'assistant', content: task.answer }];
    expect(await verify(guessed, task.answer)).toEqual({
      reward: 0,
      detail: `answered ${task.answer} without a lookup returning it (a guess)`,
    });
    expect(await verify(followed, 'seven')).toMatchObject({ reward: 0 });
    expect(await verify(followed, null)).toMatchObject({ reward: 0, detail: 'no final answer' });
  });
});

describe('solve', () => {
  it('produces demonstrations that, replayed through the real loop and tool, reproduce themselves and score 1', async () => {
    for (const task of multiHop.tasks('train', 10, 3)) {
      const demo = solve(task);
      const replies = demo.filter((message): message is AssistantMessage => message.role === 'assistant');
      expect(replies).toHaveLength(task.hops + 1);
      const policy = new ScriptedPolicyClient(
        replies.map((message) => ({
          message,
          finishReason: message.tool_calls ? 'tool_calls' : 'stop',
          servedBy: 'solver',
          latencyMs: 0,
        })),
      );
      const sink = new InMemoryTrajectorySink();
      const result = await runEpisode({ environment: multiHop, task, policy, sink, model: 'solver' });
      policy.assertDone();
      expect(result).toMatchObject({ status: 'finished', reward: 1 });
      expect(result.messages).toEqual(demo);
    }
  });

  it('gives up at about the asked rate, at once: a demonstration answers ? before any lookup, and scores 0', async () => {
    const random = seededRandom(9);
    const tasks = multiHop.tasks('train', 400, 4);
    let quits = 0;
    for (const task of tasks) {
      const demo = solve(task, { rate: 0.3, random });
      const replies = demo.filter((message): message is AssistantMessage => message.role === 'assistant');
      if (replies.length > 1) {
        expect(demo).toEqual(solve(task));
        continue;
      }
      quits++;
      expect(demo).toEqual([...solve(task).slice(0, 2), { role: 'assistant', content: giveUpAnswer }]);
      const policy = new ScriptedPolicyClient(
        replies.map((message) => ({ message, finishReason: 'stop', servedBy: 'solver', latencyMs: 0 })),
      );
      const result = await runEpisode({
        environment: multiHop,
        task,
        policy,
        sink: new InMemoryTrajectorySink(),
        model: 'solver',
      });
      expect(result.messages).toEqual(demo);
      expect(result).toMatchObject({ status: 'finished', reward: 0 });
    }
    // 400 tasks: ~120 quits expected (binomial sd ≈ 9).
    expect(quits / tasks.length).toBeGreaterThan(0.24);
    expect(quits / tasks.length).toBeLessThan(0.36);
    expect(solve(tasks[0] as MultiHopTask, { rate: 0, random })).toEqual(solve(tasks[0] as MultiHopTask));
    expect(() => solve(tasks[0] as MultiHopTask, { rate: 1.5, random })).toThrow(
      /give-up rate must be in \[0, 1\], got 1.5/,
    );
  });
});
