import { describe, expect, it } from 'vitest';
import type { Turn } from '../../protocol/turn.ts';
import type { TurnRow } from '../schema/turns.ts';
import { toTurnRow, turnDifference } from './turn-row.ts';

const turn: Turn = {
  schemaVersion: 1,
  trajectoryId: '7d5f0a9e-1c1b-4c55-9a47-3d1a2c9e8b10',
  index: 2,
  role: 'assistant',
  content: null,
  toolCalls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }],
  completionTokenIds: [1, 2],
  completionLogprobs: [-0.5, -0.25],
  metadata: { b: 1, a: { y: 2, x: 1 } },
};

function stored(overrides: Partial<TurnRow> = {}): TurnRow {
  return { ...(toTurnRow(turn) as TurnRow), createdAt: new Date(0), ...overrides };
}

describe('turnDifference', () => {
  it('finds no difference with the stored copy, whatever the key order of JSON objects', () => {
    expect(turnDifference(stored({ metadata: { a: { x: 1, y: 2 }, b: 1 } }), turn)).toBeUndefined();
  });

  it('names the first differing field', () => {
    expect(turnDifference(stored({ completionLogprobs: [-0.5, -0.2500001] }), turn)).toBe(
      'completionLogprobs',
    );
    expect(turnDifference(stored({ content: '' }), turn)).toBe('content');
    expect(turnDifference(stored({ servedBy: 'agent@1' }), turn)).toBe('servedBy');
    expect(turnDifference(stored({ toolCalls: null }), turn)).toBe('toolCalls');
  });
});
