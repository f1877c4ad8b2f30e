// scoreGroup against the stand-in judge HTTP server (test/doubles/judge-server.ts, a test double that
// plays an OpenAI-compatible judge API over real HTTP): id matching, format fallback, every failure of
// the judge's answer and transport, identical groups, no-signal groups, caching, seeded order, K orders.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../protocol/chat.ts';
import { canonicalJson } from '../../protocol/canonical-json.ts';
import { createJudgeClient, type JudgeClient } from '../../trainer/ruler/judge-client.ts';
import type { JudgeGroup } from '../../trainer/ruler/judge-group.ts';
import { createMemoryRulerCache } from '../../trainer/ruler/ruler-cache.ts';
import {
  type RulerConfig,
  type RulerConfigInput,
  resolveRulerConfig,
} from '../../trainer/ruler/ruler-config.ts';
import { RulerInputError, scoreGroup } from '../../trainer/ruler/score-group.ts';
import type { ScoredGroup, ScoreGroupResult } from '../../trainer/ruler/score-group-result.ts';
import {
  type AnswerEntry,
  answerWith,
  type JudgeBehaviour,
  type JudgeServer,
  type SeenBlock,
  startJudgeServer,
} from '../doubles/judge-server.ts';
import { lookupGroup, lookupTools } from './lookup-group.ts';

const trajectories = lookupGroup();
const group: JudgeGroup = {
  groupId: 'g1',
  trajectories: trajectories.map(({ id, messages }) => ({ id, messages })),
  tools: lookupTools,
};
/** What the scripted judge gives each trajectory: distinct values, so a mix-up cannot go unnoticed. */
const quality = [0.9, 0.7, 0.2, 0.3, 0.1, 0.6, 0.8, 0.4];
const expected = new Map(trajectories.map((t, index) => [t.id, quality[index] as number]));

/** Which fixture trajectory a block shows: the one whose messages end with the block's messages. */
function identify(block: SeenBlock): number {
  // Canonical JSON: zod's parse rewrites key order, so compare content, not text.
  const tail = canonicalJson(block.messages);
  const index = trajectories.findIndex(
    (t) => canonicalJson(t.messages.slice(t.messages.length - block.messages.length)) === tail,
  );
  if (index < 0) throw new Error(`block ${block.label} matches no fixture trajectory`);
  return index;
}
const byQuality = (block: SeenBlock) => quality[identify(block)] as number;
const good = answerWith(byQuality);

let server: JudgeServer;
let delays: number[];
const sleep = async (ms: number) => {
  delays.push(ms);
};

function setup(overrides: Partial<RulerConfigInput> = {}): { config: RulerConfig; client: JudgeClient } {
  const config = resolveRulerConfig({
    baseUrl: server.baseUrl,
    model: 'judge-test',
    apiKey: 'test-key',
    timeoutMs: 2_000,
    backoffBaseMs: 10,
    backoffMaxMs: 40,
    ...overrides,
  });
  const client = createJudgeClient(config);
  return { config, client };
}

function scored(result: ScoreGroupResult): ScoredGroup {
  if (result.status !== 'scored') throw new Error(`expected scored, got: ${result.reason}`);
  return result;
}

function expectScoresByQuality(result: ScoreGroupResult): void {
  const scores = scored(result).scores;
  expect(scores.map((s) => s.trajectoryId)).toEqual(group.trajectories.map((t) => t.id));
  for (const score of scores) expect(score.score).toBe(expected.get(score.trajectoryId));
}

beforeEach(async () => {
  server = await startJudgeServer();
  delays = [];
});
afterEach(async () => {
  try {
    server.verify();
  } finally {
    await server.close();
  }
});

describe('scoreGroup against the stand-in judge server', () => {
  it('matches scores by id even when the judge lists them in reverse, and meters tokens and cost', async () => {
    server.enqueue(answerWith(byQuality, (entries) => ({ scores: [...entries].reverse() })));
    const { config, client } = setup({ pricePromptPerMillion: 2, priceCompletionPerMillion: 8 });
    const result = scored(await scoreGroup(group, { config, client, sleep }));
    expectScoresByQuality(result);
    expect(result.noSignal).toBe(false);
    expect(result.calls).toBe(1);
    // One call: 1000 prompt + 100 completion tokens (the double's default usage).
    expect(result.usage).toEqual({ promptTokens: 1000, completionTokens: 100, unreportedCalls: 0 });
    // (1000·2 + 100·8) / 1e6 = 2800 / 1e6 = 0.0028 USD
    expect(result.costUsd).toBeCloseTo(0.0028, 12);
    expect(result.judgeModel).toBe('judge-test');
    expect(result.rubricHash).toMatch(/^[0-9a-f]{64}$/);

    const request = server.requests[0];
    expect(request?.authorization).toBe('Bearer test-key');
    expect(request?.body.model).toBe('judge-test');
    expect(request?.responseFormat).toBe('json_schema');
    const format = request?.body.response_format as { json_schema: { strict: boolean; schema: unknown } };
    expect(format.json_schema.strict).toBe(true);
    const labels = request?.blocks.map((block) => block.label);
    expect(JSON.stringify(format.json_schema.schema)).toContain(JSON.stringify(labels));
    expect(request?.context).toEqual(trajectories[0]?.messages.slice(0, 2));
    expect(request?.tools).toEqual(lookupTools);
    expect(request?.blocks).toHaveLength(8);
    // No real trajectory id is sent to the judge.
    expect(JSON.stringify(request?.body)).not.toContain(trajectories[0]?.id);
  });

  it('falls back to JSON mode when the endpoint rejects json_schema, and remembers it', async () => {
    await server.close();
    server = await startJudgeServer({ accepts: { json_schema: false } });
    server.enqueue(good, good);
    const { config, client } = setup();
    const first = scored(await scoreGroup(group, { config, client, sleep }));
    expectScoresByQuality(first);
    expect(server.requests.map((r) => r.responseFormat)).toEqual(['json_schema', 'json_object']);
    expect(first.notes).toContain('the judge endpoint answered in json_object mode');
    await scoreGroup(group, { config, client, sleep });
    expect(server.requests.map((r) => r.responseFormat)).toEqual([
      'json_schema',
      'json_object',
      'json_object',
    ]);
    expect(delays).toEqual([]);
  });

  it('falls back to plain text and pulls the JSON out of prose for endpoints with neither format', async () => {
    await server.close();
    server = await startJudgeServer({ accepts: { json_schema: false, json_object: false } });
    server.enqueue({
      kind: 'raw',
      content: (request) =>
        `Having read all attempts:\n\`\`\`json\n${JSON.stringify({
          scores: request.blocks.map((b) => ({
            trajectory_id: b.label,
            explanation: 'x',
            score: byQuality(b),
          })),
        })}\n\`\`\`\nLet me know if you need more detail.`,
    });
    const { config, client } = setup();
    expectScoresByQuality(await scoreGroup(group, { config, client, sleep }));
    expect(server.requests.map((r) => r.responseFormat)).toEqual(['json_schema', 'json_object', undefined]);
    expect(server.requests[2]?.body.response_format).toBeUndefined();
  });

  const badAnswers: [string, JudgeBehaviour][] = [
    [
      'unknown-id',
      answerWith(byQuality, (e) => ({
        scores: e.map((x, i) => (i === 0 ? { ...x, trajectory_id: 'zz9' } : x)),
      })),
    ],
    ['duplicate-id', answerWith(byQuality, (e) => ({ scores: [e[0], ...e.slice(0, -1)] }))],
    ['wrong-count', answerWith(byQuality, (e) => ({ scores: e.slice(1) }))],
    ['out-of-range', answerWith((b) => byQuality(b) * 10)],
    ['not-a-number', answerWith((b) => String(byQuality(b)))],
    [
      'not-a-number',
      {
        kind: 'raw',
        content: (r) =>
          `{"scores": [${r.blocks.map((b) => `{"trajectory_id": "${b.label}", "explanation": "x", "score": NaN}`).join(', ')}]}`,
      },
    ],
    [
      'malformed-json',
      { kind: 'raw', content: '{"scores": [{"trajectory_id": "k7q", "expla', finishReason: 'length' },
    ],
    ['empty-answer', { kind: 'raw', content: '' }],
    ['wrong-shape', answerWith(byQuality, (e: AnswerEntry[]) => ({ ratings: e }))],
  ];
  for (const [code, bad] of badAnswers) {
    it(`retries a ${code} answer at once, naming the problem to the judge`, async () => {
      server.enqueue(bad, good);
      const { config, client } = setup();
      const result = scored(await scoreGroup(group, { config, client, sleep }));
      expectScoresByQuality(result);
      expect(result.calls).toBe(2);
      expect(result.notes).toContain('ordering 1: 1 retried attempt(s)');
      expect(delays).toEqual([]); // a bad answer is not a busy server: no backoff
      const repair = server.requests[1]?.messages.at(-1)?.content ?? '';
      expect(repair).toContain(`That answer cannot be used: ${code}`);
      // Both tries cost tokens: 2 × 1000 prompt tokens.
      expect(result.usage.promptTokens).toBe(2000);
    });

    it(`marks the group unscored with the reason after ${code} on every attempt`, async () => {
      server.enqueue(bad, bad, bad);
      const { config, client } = setup({ maxRetries: 2 });
      const result = await scoreGroup(group, { config, client, sleep });
      expect(result.status).toBe('unscored');
      if (result.status !== 'unscored') return;
      expect(result.code).toBe(code);
      expect(result.attempts).toBe(3);
      expect(result.reason).toMatch(new RegExp(`^judge failed after 3 attempt\\(s\\): ${code}: `));
      expect(result.history).toHaveLength(3);
      expect(result).not.toHaveProperty('scores');
    });
  }

  it('retries a timeout after a backoff, then gives up after the last attempt', async () => {
    server.enqueue({ kind: 'hang', ms: 1_500 }, good);
    const { config, client } = setup({ timeoutMs: 200 });
    expectScoresByQuality(await scoreGroup(group, { config, client, sleep }));
    expect(delays).toEqual([10]);

    server.enqueue({ kind: 'hang', ms: 1_500 }, { kind: 'hang', ms: 1_500 });
    const failed = await scoreGroup(group, { config: { ...config, maxRetries: 1 }, client, sleep });
    expect(failed.status).toBe('unscored');
    if (failed.status !== 'unscored') return;
    expect(failed.code).toBe('timeout');
    expect(failed.reason).toContain('no answer within 200 ms');
    // A timed-out call may still be billed: usage is flagged as a lower bound.
    expect(failed.usage.unreportedCalls).toBe(2);
  });

  it('retries 5xx with exponential backoff: 10 ms, then 20 ms, then gives up', async () => {
    server.enqueue({ kind: 'status', status: 500 }, good);
    const { config, client } = setup();
    expectScoresByQuality(await scoreGroup(group, { config, client, sleep }));
    expect(delays).toEqual([10]);

    delays = [];
    server.enqueue(...Array.from({ length: 3 }, (): JudgeBehaviour => ({ kind: 'status', status: 503 })));
    const failed = await scoreGroup(group, { config, client, sleep });
    expect(failed.status === 'unscored' && failed.reason).toBe(
      'judge failed after 3 attempt(s): http: HTTP 503: status 503',
    );
    // base·2^(n−1): 10, 20; no sleep after the last attempt.
    expect(delays).toEqual([10, 20]);
  });

  it('honours Retry-After on a 429, within the backoff cap', async () => {
    server.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '0.03' } }, good);
    const { config, client } = setup();
    expectScoresByQuality(await scoreGroup(group, { config, client, sleep }));
    // max(10 ms backoff, 30 ms asked) = 30 ms, under the 40 ms cap.
    expect(delays).toEqual([30]);
  });

  it("honours OpenAI's retry-after-ms before Retry-After, and an HTTP date, within the cap", async () => {
    server.enqueue(
      { kind: 'status', status: 429, headers: { 'retry-after-ms': '25', 'retry-after': '1' } },
      { kind: 'status', status: 503, headers: { 'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT' } },
      good,
    );
    const { config, client } = setup();
    expectScoresByQuality(await scoreGroup(group, { config, client, sleep }));
    // max(10, 25) = 25; the date is long past (a wait of 0), so the backoff stands: 20.
    expect(delays).toEqual([25, 20]);
  });

  it('retries an unreachable judge and names the cause', async () => {
    const { config } = setup({ maxRetries: 1 });
    // A port that was just free: nothing listens there, so the connection is refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const client = createJudgeClient({ ...config, baseUrl });
    const result = await scoreGroup(group, { config, client, sleep });
    expect(result).toMatchObject({ status: 'unscored', code: 'network', attempts: 2 });
    expect(result.status === 'unscored' && result.reason).toMatch(
      new RegExp(`request to ${baseUrl}/chat/completions failed: fetch failed \\(connect ECONNREFUSED`),
    );
    expect(delays).toEqual([10]);
  });

  it('retries a 409 as the OpenAI SDKs do', async () => {
    server.enqueue({ kind: 'status', status: 409 }, good);
    const { config, client } = setup();
    expect(scored(await scoreGroup(group, { config, client, sleep })).calls).toBe(2);
    expect(delays).toEqual([10]);
  });

  it('does not retry a 401: one attempt, unscored, the endpoint message kept', async () => {
    server.enqueue({
      kind: 'status',
      status: 401,
      body: { error: { message: 'Incorrect API key provided' } },
    });
    const { config, client } = setup();
    const result = await scoreGroup(group, { config, client, sleep });
    expect(result).toMatchObject({
      status: 'unscored',
      code: 'http',
      attempts: 1,
      reason: 'judge failed after 1 attempt(s): http: HTTP 401: Incorrect API key provided',
    });
  });

  it('retries a completion without choices', async () => {
    server.enqueue({ kind: 'no-choices' }, good);
    const { config, client } = setup();
    const result = scored(await scoreGroup(group, { config, client, sleep }));
    expect(result.calls).toBe(2);
    // The empty completion still reported (and billed) its 1000 prompt tokens: 2 × 1000.
    expect(result.usage.promptTokens).toBe(2000);
  });

  it('judges an all-identical group once, copies the score, and flags it as carrying no signal', async () => {
    const messages = trajectories[0]?.messages as ChatMessage[];
    const identical: JudgeGroup = {
      trajectories: ['a', 'b', 'c', 'd'].map((id) => ({ id, messages: structuredClone(messages) })),
    };
    server.enqueue(answerWith(() => 0.85));
    const { config, client } = setup({ orderings: 2 });
    const result = scored(await scoreGroup(identical, { config, client, sleep }));
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.context).toBeUndefined();
    expect(request?.blocks).toHaveLength(1);
    expect(request?.blocks[0]?.messages).toEqual(messages);
    expect(result.scores.map((s) => [s.trajectoryId, s.score])).toEqual([
      ['a', 0.85],
      ['b', 0.85],
      ['c', 0.85],
      ['d', 0.85],
    ]);
    expect(result.noSignal).toBe(true);
    expect(result.notes).toContain('all 4 trajectories are identical: judged once, the score copied to each');
  });

  it('flags a group whose scores have no spread', async () => {
    server.enqueue(answerWith(() => 0.5));
    const { config, client } = setup();
    const result = scored(await scoreGroup(group, { config, client, sleep }));
    expect(result.noSignal).toBe(true);
    expect(result.notes).toContain('scores have no spread (all 0.5): the group carries no signal for GRPO');
  });

  it('serves a second scoring of the same group from the cache without calling the judge', async () => {
    server.enqueue(good);
    const { config, client } = setup();
    const cache = createMemoryRulerCache();
    const first = scored(await scoreGroup(group, { config, client, cache, sleep }));
    expect(first.cached).toBe(false);
    const reversed = { ...group, trajectories: [...group.trajectories].reverse() };
    const second = scored(await scoreGroup(reversed, { config, client, cache, sleep }));
    expect(server.requests).toHaveLength(1);
    expect(second.cached).toBe(true);
    expect(second.calls).toBe(0);
    expect(second.scores.map((s) => s.trajectoryId)).toEqual(reversed.trajectories.map((t) => t.id));
    for (const score of second.scores) expect(score.score).toBe(expected.get(score.trajectoryId));
    expect(second.groupHash).toBe(first.groupHash);

    // Another rubric is another judging.
    server.enqueue(good);
    scored(
      await scoreGroup({ ...group, rubric: 'Only correctness counts.' }, { config, client, cache, sleep }),
    );
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.messages[0]?.content).toContain(
      'Grading standards:\nOnly correctness counts.',
    );
  });

  it('does not cache a failed judging', async () => {
    server.enqueue(
      { kind: 'status', status: 400, body: { error: { message: 'context length exceeded' } } },
      good,
    );
    const { config, client } = setup();
    const cache = createMemoryRulerCache();
    expect((await scoreGroup(group, { config, client, cache, sleep })).status).toBe('unscored');
    expect(cache.size).toBe(0);
    expectScoresByQuality(await scoreGroup(group, { config, client, cache, sleep }));
  });

  it('shuffles the order reproducibly from the seed, whatever the input order', async () => {
    server.enqueue(good, good, good, good);
    const { config, client } = setup({ seed: 11 });
    const reversed = { ...group, trajectories: [...group.trajectories].reverse() };
    await scoreGroup(group, { config, client, sleep });
    await scoreGroup(reversed, { config, client, sleep });
    await scoreGroup(group, { config: { ...config, seed: 12 }, client, sleep });
    await scoreGroup(group, { config: { ...config, seed: 12 }, client, sleep });
    const seen = server.requests.map((r) => r.blocks.map((b) => `${identify(b)}:${b.label}`).join(' '));
    expect(seen[1]).toBe(seen[0]);
    expect(seen[3]).toBe(seen[2]);
    expect(seen[2]).not.toBe(seen[0]);
    // Shuffled: the judge does not see the trajectories in input order.
    const order = server.requests[0]?.blocks.map(identify);
    expect(order).not.toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect([...(order ?? [])].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('averages K = 2 reversed orders, cancelling a judge that favours early positions', async () => {
    // The double adds 0.02·(7 − position): +0.14 for the first block, 0 for the last. Over an order and
    // its reverse, positions p and 7 − p give 0.02·(7 − p) + 0.02·p = 0.14, i.e. +0.07 on average.
    const biased = answerWith((block) => byQuality(block) * 0.5 + 0.02 * (7 - block.position));
    server.enqueue(biased, biased);
    const { config, client } = setup({ orderings: 2 });
    const result = scored(await scoreGroup(group, { config, client, sleep }));
    expect(server.requests).toHaveLength(2);
    const first = server.requests[0]?.blocks.map(identify);
    expect(server.requests[1]?.blocks.map(identify)).toEqual([...(first ?? [])].reverse());
    let largest = 0;
    for (const score of result.scores) {
      const q = expected.get(score.trajectoryId) as number;
      // mean = 0.5·q + 0.07; e.g. q = 0.9 → 0.45 + 0.07 = 0.52
      largest = Math.max(largest, Math.abs(score.score - (0.5 * q + 0.07)));
      expect(score.orderingScores).toHaveLength(2);
    }
    expect(largest).toBeLessThan(1e-12);
    expect(result.notes.some((note) => note.startsWith('judged in 2 orders; largest disagreement 0.1'))).toBe(
      true,
    );
  });

  it('fails the whole group when one of the K orders fails, never averaging a partial set', async () => {
    server.enqueue(good, { kind: 'status', status: 404, body: { error: { message: 'model not found' } } });
    const { config, client } = setup({ orderings: 2 });
    const result = await scoreGroup(group, { config, client, sleep });
    expect(result.status === 'unscored' && result.reason).toBe(
      'judge failed after 1 attempt(s) on ordering 2 of 2: http: HTTP 404: model not found',
    );
    expect(result.usage.promptTokens).toBe(1000);
  });

  it('refuses a malformed group before calling the judge, naming the problem', async () => {
    const { config, client } = setup();
    const duplicate = { ...group, trajectories: [group.trajectories[0]!, group.trajectories[0]!] };
    await expect(scoreGroup(duplicate, { config, client, sleep })).rejects.toThrow(RulerInputError);
    await expect(scoreGroup(duplicate, { config, client, sleep })).rejects.toThrow(
      /cannot score group g1: trajectories\.1\.id: duplicate trajectory id "7f3c2a10/,
    );
    await expect(scoreGroup({ trajectories: [] }, { config, client, sleep })).rejects.toThrow(/trajectories/);
    expect(server.requests).toHaveLength(0);
  });
});
