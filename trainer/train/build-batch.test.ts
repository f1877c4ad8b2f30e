// buildBatch with the tiny tokenizer: spliced sequences hold exactly the stored sampled ids, the mask
// covers exactly the assistant tokens, the sampling logprobs land on the positions that predict their
// tokens, turns without ids are re-tokenized and marked on-policy, drift is measured, and bad
// trajectories are left out with a reason.
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { buildBatch, type StoredMessage, type TrajectoryInput } from './build-batch.ts';
import { tinyFiles, tinyTokenizer } from '../../test/train/support/tiny-policy.ts';

const tokenizer = tinyTokenizer();
const eos = tinyFiles.specialTokens.imEnd;
const options = { vocabSize: tinyFiles.vocabSize, maxTokens: 4096 };
const tools: ToolSpec[] = [
  {
    type: 'function',
    function: { name: 'lookup', description: 'Look a key up.', parameters: { type: 'object' } },
  },
];

/** An assistant turn whose stored ids are the tokenizer's own encoding + eos, logprobs −0.01·(k+1). */
function sampled(content: string, extra: Partial<StoredMessage> = {}): StoredMessage {
  const ids = [...tokenizer.encode(content), eos];
  return {
    role: 'assistant',
    content,
    completionTokenIds: ids,
    completionLogprobs: ids.map((_, k) => -0.01 * (k + 1)),
    ...extra,
  } as StoredMessage;
}

function trajectory(messages: StoredMessage[], advantage = 0.5): TrajectoryInput {
  return { trajectoryId: 't1', groupId: 'g1', messages, tools, advantage };
}

const prompt: ChatMessage[] = [
  { role: 'system', content: 'Find the value.' },
  { role: 'user', content: 'Start at key a.' },
];

describe('buildBatch', () => {
  it('splices the stored ids of every assistant turn, masks exactly them and aligns their logprobs', () => {
    const first = sampled('', {
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"key": "a"}' } },
      ],
    } as Partial<StoredMessage>);
    // The tool-call turn's stored ids must be what the template renders for it, so take them from a render.
    const rendered = tokenizer.applyChatTemplate([...prompt, first], { tools });
    const opener = tokenizer.applyChatTemplate(prompt, { tools, addGenerationPrompt: true });
    const body = rendered.slice(opener.length, rendered.indexOf('<|im_end|>', opener.length));
    const callIds = [...tokenizer.encode(body), eos];
    const firstTurn = {
      ...first,
      completionTokenIds: callIds,
      completionLogprobs: callIds.map((_, k) => -0.01 * (k + 1)),
    } as StoredMessage;
    const last = sampled('The value is 7.');
    const messages: StoredMessage[] = [
      ...prompt,
      firstTurn,
      { role: 'tool', content: 'value 7', tool_call_id: 'call_1' },
      last,
    ];
    const { sequences, reports, skipped } = buildBatch(tokenizer, [trajectory(messages)], options);
    expect(skipped).toEqual([]);
    const [sequence] = sequences;
    if (!sequence) throw new Error('no sequence');
    const stored = [...callIds, ...(last.completionTokenIds as number[])];
    const storedLogprobs = [
      ...(firstTurn.completionLogprobs as number[]),
      ...(last.completionLogprobs as number[]),
    ];
    // Masked targets, in order, are exactly the stored ids; their old logprobs are the stored ones.
    const maskedIds = sequence.targetMask.flatMap((bit, t) => (bit ? [sequence.ids[t + 1] as number] : []));
    const maskedOld = sequence.targetMask.flatMap((bit, t) =>
      bit ? [sequence.oldLogprobs[t] as number] : [],
    );
    expect(maskedIds).toEqual(stored);
    expect(maskedOld).toEqual(storedLogprobs);
    expect(sequence.trainedTokens).toBe(stored.length);
    expect(sequence.targetMask).toHaveLength(sequence.ids.length - 1);
    // Off the mask: no logprob, nothing on-policy.
    expect(
      sequence.oldLogprobs.every((value, t) =>
        sequence.targetMask[t] ? Number.isFinite(value) : Number.isNaN(value),
      ),
    ).toBe(true);
    expect(sequence.onPolicy.every((bit) => bit === 0)).toBe(true);
    expect(sequence.advantage).toBe(0.5);
    // Splicing ids that equal the re-tokenized text reproduces tokenizing the whole render.
    expect(sequence.ids).toEqual(tokenizer.encodeChat(messages, { tools }));
    expect(reports).toEqual([
      {
        trajectoryId: 't1',
        sampledTurns: 2,
        retokenizedTurns: 0,
        driftTurns: 0,
        driftTokens: 0,
        onPolicyTokens: 0,
      },
    ]);
  });

  it('keeps stored ids that differ from the re-tokenized text, and reports the drift', () => {
    const text = 'hello world';
    // One byte per token (ids 0–255 equal byte values): the sampler did not use the merges.
    const bytes = [...new TextEncoder().encode(text), eos];
    expect(tokenizer.encode(text).length).toBeLessThan(bytes.length - 1); // the tokenizer merges
    const turn = {
      role: 'assistant',
      content: text,
      completionTokenIds: bytes,
      completionLogprobs: bytes.map(() => -1),
    } as StoredMessage;
    const { sequences, reports } = buildBatch(tokenizer, [trajectory([...prompt, turn])], options);
    const sequence = sequences[0];
    expect(sequence?.targetMask.flatMap((bit, t) => (bit ? [sequence.ids[t + 1]] : []))).toEqual(bytes);
    expect(reports[0]?.driftTurns).toBe(1);
    expect(reports[0]?.driftTokens).toBeGreaterThan(0);
  });

  it('re-tokenizes turns without stored ids and trains them on-policy (ratio ≡ 1)', () => {
    const unsampled: StoredMessage = { role: 'assistant', content: 'The value is 7.' };
    const withoutLogprobs = { ...sampled('Done.'), completionLogprobs: undefined } as StoredMessage;
    const { sequences, reports } = buildBatch(
      tokenizer,
      [trajectory([...prompt, unsampled, { role: 'user', content: 'And?' }, withoutLogprobs])],
      options,
    );
    const sequence = sequences[0];
    if (!sequence) throw new Error('no sequence');
    // Re-tokenized: the text's ids plus <|im_end|>; with ids but no logprobs: the stored ids.
    const expected = [...tokenizer.encode('The value is 7.'), eos, ...tokenizer.encode('Done.'), eos];
    expect(sequence.targetMask.flatMap((bit, t) => (bit ? [sequence.ids[t + 1]] : []))).toEqual(expected);
    expect(sequence.onPolicy).toEqual(sequence.targetMask);
    expect(reports[0]).toMatchObject({
      sampledTurns: 1,
      retokenizedTurns: 1,
      onPolicyTokens: expected.length,
    });
  });

  it('leaves out trajectories it cannot train on, naming why', () => {
    const outside = { ...sampled('hi'), completionTokenIds: [104, 99_999, eos] } as StoredMessage;
    const mismatched = { ...sampled('hi'), completionLogprobs: [-1] } as StoredMessage;
    const long = sampled('x'.repeat(50));
    const inputs: TrajectoryInput[] = [
      { ...trajectory([...prompt, outside]), trajectoryId: 'outside' },
      { ...trajectory([...prompt, mismatched]), trajectoryId: 'mismatched' },
      { ...trajectory([...prompt, long]), trajectoryId: 'long' },
      { ...trajectory(prompt), trajectoryId: 'no-assistant' },
      { ...trajectory([...prompt, sampled('ok')]), trajectoryId: 'fine' },
    ];
    const fineLength = buildBatch(tokenizer, [inputs[4] as TrajectoryInput], options).sequences[0]?.ids
      .length as number;
    const { sequences, skipped } = buildBatch(tokenizer, inputs, { ...options, maxTokens: fineLength + 5 });
    expect(sequences.map((sequence) => sequence.trajectoryId)).toEqual(['fine']);
    expect(skipped.map(({ trajectoryId, reason }) => [trajectoryId, reason])).toEqual([
      ['outside', 'bad-token-data'],
      ['mismatched', 'bad-token-data'],
      ['long', 'too-long'],
      ['no-assistant', 'no-assistant-tokens'],
    ]);
    expect(skipped[0]?.detail).toMatch(/token id 99999 is outside the model's vocabulary/);
    expect(skipped[1]?.detail).toMatch(/1 logprobs for 3 token ids/);
  });
});
