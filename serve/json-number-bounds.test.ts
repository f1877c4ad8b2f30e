// Bounds on non-integer numbers against independent references: every short number text (all strings
// over "-01259." up to five characters, digits chosen to meet each case's bounds) is accepted exactly when JSON.parse reads a number the
// zod schema with the same bounds accepts, and random walks never get stuck and always end in range.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRng } from '../model/rng.ts';
import { feed, walk } from '../test/support/json-documents.ts';
import type { AutomatonState } from './automaton-state.ts';
import { stateAccepts, startState, stepState } from './grammar-automaton.ts';
import { jsonValue } from './grammar-node.ts';
import { compileJsonSchema } from './json-schema-grammar.ts';

const cases: [string, z.ZodNumber][] = [
  ['0 ≤ x ≤ 1', z.number().min(0).max(1)],
  ['0 < x < 1', z.number().gt(0).lt(1)],
  ['-2.5 ≤ x < -0.1', z.number().min(-2.5).lt(-0.1)],
  ['x = 0.25', z.number().min(0.25).max(0.25)],
  ['9.99 < x ≤ 10', z.number().gt(9.99).max(10)],
  ['x ≥ -0.05', z.number().min(-0.05)],
  ['x < 12', z.number().lt(12)],
];

/** Every string over the number alphabet up to `length` characters. */
function* texts(length: number, prefix = ''): Generator<string> {
  if (prefix) yield prefix;
  if (prefix.length === length) return;
  for (const char of '-01259.') yield* texts(length, prefix + char);
}

const parses = (text: string) => /^-?(0|[1-9]\d*)(\.\d+)?$/.test(text);

describe('bounds on numbers that are not integers', () => {
  it.each(cases)('accept exactly the short numbers in range (%s)', (_, zodNumber) => {
    const grammar = jsonValue(compileJsonSchema(z.toJSONSchema(zodNumber), 'schema'));
    let accepted = 0;
    for (const text of texts(5)) {
      const expected = parses(text) && zodNumber.safeParse(JSON.parse(text)).success;
      expect({ text, accepts: feed(grammar, text).accepts }).toEqual({ text, accepts: expected });
      if (expected) accepted += 1;
    }
    expect(accepted).toBeGreaterThan(0);
    // An exponent is never written under bounds, even for a value in range.
    expect(feed(grammar, '1e0').accepts).toBe(false);
  });

  it.each(cases)('never get stuck and end in range (%s)', (_, zodNumber) => {
    const grammar = jsonValue(compileJsonSchema(z.toJSONSchema(zodNumber), 'schema'));
    const rng = createRng(21);
    for (let i = 0; i < 60; i++) {
      const result = walk(grammar, rng, new Uint8Array(0), 60);
      expect(result.stuck).toBe(false);
      if (!result.ended) continue;
      const text = new TextDecoder().decode(result.bytes);
      expect({ text, ok: zodNumber.safeParse(JSON.parse(text)).success }).toEqual({ text, ok: true });
    }
  });

  it.each(cases)(
    'lead every prefix they allow to a number in range within four bytes (%s)',
    (_, zodNumber) => {
      const grammar = jsonValue(compileJsonSchema(z.toJSONSchema(zodNumber), 'schema'));
      const bytes = [...'-0123456789.'].map((char) => char.charCodeAt(0));
      const completes = (state: AutomatonState, depth: number): boolean =>
        stateAccepts(state) ||
        (depth > 0 &&
          bytes.some((byte) => {
            const next = stepState(state, byte);
            return next !== undefined && completes(next, depth - 1);
          }));
      for (const text of texts(4)) {
        let state: AutomatonState | undefined = startState(grammar);
        for (const char of text) state = state && stepState(state, char.charCodeAt(0));
        if (state) expect({ text, completes: completes(state, 4) }).toEqual({ text, completes: true });
      }
    },
  );

  it('admits no value where the bounds leave none, and filters an enum by them', () => {
    expect(() => compileJsonSchema({ type: 'number', exclusiveMinimum: 1, maximum: 1 }, 's')).toThrow(
      'admits no value',
    );
    const grammar = jsonValue(compileJsonSchema({ enum: [0.5, 1.5, 'x'], maximum: 1 }, 's'));
    expect(feed(grammar, '0.5').accepts).toBe(true);
    expect(feed(grammar, '1.5').accepts).toBe(false);
    expect(feed(grammar, '"x"').accepts).toBe(true);
  });
});
