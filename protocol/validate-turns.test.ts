// The writers' one rule set, on hand-written turns: each rule's boundary values, and what the episode
// loop and the proxy legitimately write (system first, parallel calls, a call left unanswered at the end).
import { describe, expect, it } from 'vitest';
import { turnInputSchema } from './turn.ts';
import {
  type CheckedTurn,
  episodeStart,
  logprobIssue,
  rewardIssue,
  rewardSchema,
  sequenceIssues,
  tokenIdIssue,
  validateTurns,
} from './validate-turns.ts';

const call = (id: string) => ({
  id,
  type: 'function' as const,
  function: { name: 'search', arguments: '{}' },
});

describe('values', () => {
  it('takes rewards in [0, 1] only, as the finish route', () => {
    expect(rewardIssue(0)).toBeUndefined();
    expect(rewardIssue(1)).toBeUndefined();
    expect(rewardIssue(0.5)).toBeUndefined();
    expect(rewardIssue(1e308)).toBe('must be in [0, 1], got 1e+308');
    expect(rewardIssue(-0.01)).toBe('must be in [0, 1], got -0.01');
    expect(rewardIssue(Number.NaN)).toBe('must be a finite number in [0, 1]');
    expect(rewardSchema.safeParse(2).success).toBe(false);
  });

  it('takes logprobs in [−9999, 0]: no positive epsilon, vLLM’s floor for −∞ as the lowest', () => {
    expect(logprobIssue(0)).toBeUndefined();
    expect(logprobIssue(-9999)).toBeUndefined();
    expect(logprobIssue(-1.5e-7)).toBeUndefined();
    expect(logprobIssue(5)).toMatch(/^must be ≤ 0 .*got 5$/);
    expect(logprobIssue(1e-9)).toMatch(/must be ≤ 0/);
    expect(logprobIssue(-1e308)).toMatch(/^must be ≥ -9999 .*got -1e\+308$/);
    expect(logprobIssue(Number.NEGATIVE_INFINITY)).toBe('must be a finite logprob');
  });

  it('takes token ids that fit int4: 0 to 2^31 − 1', () => {
    expect(tokenIdIssue(0)).toBeUndefined();
    expect(tokenIdIssue(2 ** 31 - 1)).toBeUndefined();
    expect(tokenIdIssue(2 ** 31)).toMatch(/^must be a token id/);
    expect(tokenIdIssue(-1)).toMatch(/^must be a token id/);
    expect(tokenIdIssue(1.5)).toMatch(/^must be a token id/);
  });

  it('names the first bad value of each field of a turn, by its position', () => {
    const turn: CheckedTurn = {
      role: 'assistant',
      completionTokenIds: [1, 2, 2 ** 31],
      completionLogprobs: [-0.1, -0.2, 5],
      metadata: { untokenizedLogprobs: [-1e308] },
    };
    expect(validateTurns([{ role: 'user' }, turn]).issues).toEqual([
      { path: [1, 'completionTokenIds', 2], message: expect.stringMatching(/token id/) },
      { path: [1, 'completionLogprobs', 2], message: expect.stringMatching(/≤ 0/) },
      { path: [1, 'metadata', 'untokenizedLogprobs', 0], message: expect.stringMatching(/≥ -9999/) },
    ]);
  });

  it('is part of the turn record’s own schema, so the store refuses the same values', () => {
    const parsed = turnInputSchema.safeParse({
      trajectoryId: crypto.randomUUID(),
      index: 2,
      role: 'assistant',
      content: 'x',
      completionTokenIds: [7],
      completionLogprobs: [0.25],
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['completionLogprobs', 0]);
  });
});

describe('order', () => {
  it('takes what the episode loop writes: system, user, calls answered in order, a final answer', () => {
    const turns: CheckedTurn[] = [
      { role: 'system' },
      { role: 'user' },
      { role: 'assistant', toolCalls: [call('a'), call('b')] },
      { role: 'tool', toolCallId: 'a' },
      { role: 'tool', toolCallId: 'b' },
      { role: 'assistant', toolCalls: [call('c')] },
      { role: 'tool', toolCallId: 'c' },
      { role: 'assistant' },
    ];
    expect(validateTurns(turns).issues).toEqual([]);
  });

  it('takes a call left unanswered at the end (an episode cut off) and answers in any order', () => {
    expect(
      sequenceIssues([
        { role: 'user' },
        { role: 'assistant', toolCalls: [call('a'), call('b')] },
        { role: 'tool', toolCallId: 'b' },
      ]).issues,
    ).toEqual([]);
  });

  it('refuses a tool result that answers no call of the assistant turn before it', () => {
    const { issues } = sequenceIssues([
      { role: 'user' },
      { role: 'assistant', toolCalls: [call('a')] },
      { role: 'tool', toolCallId: 'zzz' },
    ]);
    expect(issues).toEqual([
      {
        path: [2, 'toolCallId'],
        message: 'answers no call of the assistant turn before it (its calls: "a")',
      },
    ]);
  });

  it('refuses a tool turn with no call before it: first, after a user turn, after a plain answer', () => {
    const toolAfter = (before: CheckedTurn) =>
      sequenceIssues([before, { role: 'tool', toolCallId: 'a' }]).issues;
    const message =
      'a tool result with no call before it: it must follow the assistant turn that made call "a"';
    expect(sequenceIssues([{ role: 'tool', toolCallId: 'a' }]).issues).toEqual([
      { path: [0, 'toolCallId'], message },
    ]);
    expect(toolAfter({ role: 'user' })).toEqual([{ path: [1, 'toolCallId'], message }]);
    expect(toolAfter({ role: 'assistant' })).toEqual([{ path: [1, 'toolCallId'], message }]);
  });

  it('refuses a call answered twice, and a call of an earlier assistant turn', () => {
    const twice = sequenceIssues([
      { role: 'user' },
      { role: 'assistant', toolCalls: [call('a')] },
      { role: 'tool', toolCallId: 'a' },
      { role: 'tool', toolCallId: 'a' },
    ]);
    expect(twice.issues).toEqual([{ path: [3, 'toolCallId'], message: 'answers call "a" a second time' }]);
    const stale = sequenceIssues([
      { role: 'assistant', toolCalls: [call('a')] },
      { role: 'tool', toolCallId: 'a' },
      { role: 'user' },
      { role: 'tool', toolCallId: 'a' },
    ]);
    expect(stale.issues.map((issue) => issue.path)).toEqual([[3, 'toolCallId']]);
  });

  it('refuses two assistant turns in a row, with or without calls between them unanswered', () => {
    expect(sequenceIssues([{ role: 'user' }, { role: 'assistant' }, { role: 'assistant' }]).issues).toEqual([
      {
        path: [2, 'role'],
        message: 'an assistant turn right after another: a user or tool turn must come between them',
      },
    ]);
    expect(
      sequenceIssues([{ role: 'assistant', toolCalls: [call('a')] }, { role: 'assistant' }]).issues,
    ).toHaveLength(1);
  });

  it('carries the state from one append to the next (the sink writes a step at a time)', () => {
    const first = sequenceIssues([{ role: 'user' }, { role: 'assistant', toolCalls: [call('a')] }]);
    expect(first.end).not.toEqual(episodeStart);
    expect(sequenceIssues([{ role: 'tool', toolCallId: 'a' }], first.end).issues).toEqual([]);
    expect(sequenceIssues([{ role: 'tool', toolCallId: 'b' }], first.end).issues).toHaveLength(1);
  });
});
