import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../protocol/chat.ts';
import { type GroupHashInput, groupHash, rubricHash, sha256Hex } from './group-hash.ts';

const question: ChatMessage = { role: 'user', content: 'capital of France?' };
const base: GroupHashInput = {
  judgeModel: 'judge-a',
  rubricHash: 'r1',
  settings: { promptVersion: 1, orderings: 1, seed: 0 },
  trajectories: [
    { id: 't1', messages: [question, { role: 'assistant', content: 'Paris' }] },
    { id: 't2', messages: [question, { role: 'assistant', content: 'Lyon' }] },
  ],
};

describe('sha256Hex', () => {
  it('matches the FIPS 180-2 test vector for "abc"', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes the trimmed rubric', async () => {
    expect(await rubricHash('  be fair \n')).toBe(await sha256Hex('be fair'));
  });
});

describe('groupHash', () => {
  it('ignores trajectory order and JSON key order', async () => {
    const reordered: GroupHashInput = {
      ...base,
      trajectories: [
        { id: 't2', messages: [question, { content: 'Lyon', role: 'assistant' }] },
        { id: 't1', messages: [question, { role: 'assistant', content: 'Paris' }] },
      ],
    };
    expect(await groupHash(reordered)).toBe(await groupHash(base));
  });

  it('changes with the judge, the rubric, the settings, the tools and the content', async () => {
    const reference = await groupHash(base);
    const variants: GroupHashInput[] = [
      { ...base, judgeModel: 'judge-b' },
      { ...base, rubricHash: 'r2' },
      { ...base, settings: { ...base.settings, orderings: 2 } },
      { ...base, tools: [{ type: 'function', function: { name: 'search' } }] },
      { ...base, trajectories: [base.trajectories[0]!, { id: 't2', messages: [question] }] },
      { ...base, trajectories: [base.trajectories[0]!, { ...base.trajectories[1]!, id: 't3' }] },
    ];
    const hashes = await Promise.all(variants.map(groupHash));
    expect(new Set([reference, ...hashes]).size).toBe(variants.length + 1);
  });
});
