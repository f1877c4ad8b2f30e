// Seeded generators for the guided-decoding tests: random JSON documents valid under a JSON-schema
// subset (with random whitespace, escapes, key order and optional keys), written straight from the
// schema without the grammar compiler; random walks over the bytes an automaton allows; and feeding a
// text through an automaton. Leaves out any assertion.
import type { Rng } from '../../model/rng.ts';
import type { AutomatonState } from '../../serve/automaton-state.ts';
import { maxWhitespace, stateAccepts, startState, stepState } from '../../serve/grammar-automaton.ts';
import type { GrammarNode } from '../../serve/grammar-node.ts';

const encoder = new TextEncoder();

type Schema = Record<string, unknown>;

/** Steps every byte; the index of the first byte no thread takes, or -1, and whether it ends accepted. */
export function feed(grammar: GrammarNode, text: string | Uint8Array): { deadAt: number; accepts: boolean } {
  const bytes = typeof text === 'string' ? encoder.encode(text) : text;
  let state: AutomatonState = startState(grammar);
  for (let at = 0; at < bytes.length; at++) {
    const next = stepState(state, bytes[at] as number);
    if (!next) return { deadAt: at, accepts: false };
    // Only the whole text may be complete (a prefix may be, e.g. "1" of "12": checked by the caller).
    state = next;
  }
  return { deadAt: -1, accepts: stateAccepts(state) };
}

export const pick = <T>(rng: Rng, items: readonly T[]): T =>
  items[Math.floor(rng.next() * items.length)] as T;
export const between = (rng: Rng, low: number, high: number) =>
  low + Math.floor(rng.next() * (high - low + 1));

export function whitespace(rng: Rng): string {
  const roll = rng.next();
  if (roll < 0.6) return '';
  if (roll < 0.9) return pick(rng, [' ', '\n', '\t', '\r\n', '  ']);
  return ' '.repeat(between(rng, 1, maxWhitespace));
}

/** A string's text as a JSON string literal, with random optional escapes unless `canonical`. */
export function writeString(value: string, rng: Rng, canonical: boolean): string {
  if (canonical) return JSON.stringify(value);
  let out = '"';
  for (const char of value) {
    const unit = char.codePointAt(0) as number;
    const hex = (code: number) => {
      const text = code.toString(16).padStart(4, '0');
      return `\\u${rng.next() < 0.5 ? text : text.toUpperCase()}`;
    };
    if (unit > 0xffff) {
      out += rng.next() < 0.5 ? char : hex(char.charCodeAt(0)) + hex(char.charCodeAt(1));
    } else if (char === '"' || char === '\\' || unit < 0x20) {
      out += rng.next() < 0.5 ? hex(unit) : JSON.stringify(char).slice(1, -1);
    } else if (char === '/' && rng.next() < 0.5) out += '\\/';
    else out += rng.next() < 0.15 ? hex(unit) : char;
  }
  return `${out}"`;
}

const palette = ['a', 'b', 'Z', '0', ' ', '"', '\\', '/', '\n', '\u0001', 'é', '€', '\u2028', '😀'];

function randomText(rng: Rng, low: number, high: number, astral: boolean): string {
  const chars = astral ? palette : palette.filter((c) => c !== '😀');
  return Array.from({ length: between(rng, low, high) }, () => pick(rng, chars)).join('');
}

export interface Written {
  value: unknown;
  text: string;
}

function typesOf(schema: Schema): string[] {
  const all = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];
  if (schema.type === undefined) return all;
  return Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
}

/** A random document valid under `schema` (the subset this grammar supports), value and text. */
export function generate(schema: unknown, rng: Rng, depth = 0): Written {
  if (
    schema === true ||
    (typeof schema === 'object' && schema !== null && Object.keys(schema).length === 0)
  ) {
    return generate(
      { type: pick(rng, depth > 2 ? ['string', 'number', 'boolean', 'null'] : typesOf({})) },
      rng,
      depth,
    );
  }
  const s = schema as Schema;
  if (Array.isArray(s.anyOf)) return generate(pick(rng, s.anyOf), rng, depth);
  const allowed = Array.isArray(s.enum) ? (s.enum as unknown[]) : 'const' in s ? [s.const] : undefined;
  if (allowed) {
    const types = typesOf(s);
    const fits = allowed.filter((value) => {
      if (typeof value === 'string') return types.includes('string');
      if (typeof value === 'number')
        return types.includes('number') || (types.includes('integer') && Number.isInteger(value));
      if (typeof value === 'boolean') return types.includes('boolean');
      return value === null && types.includes('null');
    });
    const value = pick(rng, fits);
    return { value, text: typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) };
  }
  const type = pick(rng, typesOf(s));
  switch (type) {
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = (s.required ?? []) as string[];
      const tracked = Object.keys(properties).length > 0 || required.length > 0;
      const keys = Object.keys(properties).filter((key) => required.includes(key) || rng.next() < 0.5);
      const extra: [string, unknown][] = [];
      if (s.additionalProperties !== false && depth < 3) {
        for (let i = between(rng, 0, 2); i > 0; i--) {
          const key = randomText(rng, 0, 4, true);
          if (!(key in properties) && !extra.some(([k]) => k === key))
            extra.push([key, s.additionalProperties ?? true]);
        }
      }
      const entries: [string, unknown][] = [
        ...keys.map((key): [string, unknown] => [key, properties[key]]),
        ...extra,
      ];
      entries.sort(() => rng.next() - 0.5);
      const value: Record<string, unknown> = {};
      const parts = entries.map(([key, sub]) => {
        const written = generate(sub, rng, depth + 1);
        value[key] = written.value;
        return `${whitespace(rng)}${writeString(key, rng, tracked)}${whitespace(rng)}:${whitespace(rng)}${written.text}${whitespace(rng)}`;
      });
      return { value, text: `{${parts.length > 0 ? parts.join(',') : whitespace(rng)}}` };
    }
    case 'array': {
      const min = (s.minItems as number | undefined) ?? 0;
      const max = Math.min((s.maxItems as number | undefined) ?? min + 3, min + 3, depth > 2 ? min : 99);
      const items = Array.from({ length: between(rng, min, max) }, () =>
        generate(s.items ?? true, rng, depth + 1),
      );
      const parts = items.map((item) => `${whitespace(rng)}${item.text}${whitespace(rng)}`);
      return {
        value: items.map((item) => item.value),
        text: `[${parts.length > 0 ? parts.join(',') : whitespace(rng)}]`,
      };
    }
    case 'string': {
      const min = (s.minLength as number | undefined) ?? 0;
      const max = Math.min((s.maxLength as number | undefined) ?? min + 8, min + 8);
      const bounded = s.minLength !== undefined || s.maxLength !== undefined;
      const value = randomText(rng, min, max, !bounded);
      return { value, text: writeString(value, rng, false) };
    }
    case 'integer': {
      const low = (s.minimum as number | undefined) ?? (s.exclusiveMinimum as number | undefined) ?? -5000;
      const high = (s.maximum as number | undefined) ?? (s.exclusiveMaximum as number | undefined) ?? 5000;
      let value = between(rng, Math.ceil(low), Math.floor(high));
      if (s.exclusiveMinimum !== undefined && value <= (s.exclusiveMinimum as number)) value += 1;
      if (s.exclusiveMaximum !== undefined && value >= (s.exclusiveMaximum as number)) value -= 1;
      return { value, text: String(value) };
    }
    case 'number': {
      const text = `${rng.next() < 0.3 ? '-' : ''}${pick(rng, ['0', '7', '42', '1000'])}${rng.next() < 0.5 ? `.${pick(rng, ['5', '25', '000'])}` : ''}${rng.next() < 0.3 ? `${pick(rng, ['e', 'E'])}${pick(rng, ['', '+', '-'])}${pick(rng, ['0', '3', '12'])}` : ''}`;
      return { value: JSON.parse(text), text };
    }
    case 'boolean': {
      const value = rng.next() < 0.5;
      return { value, text: String(value) };
    }
    default:
      return { value: null, text: 'null' };
  }
}

/**
 * `prefix`, then random bytes drawn from what the automaton allows (closers favoured so most walks
 * end) until it stops at an accepting state or runs out of room.
 */
export function walk(
  grammar: GrammarNode,
  rng: Rng,
  prefix: Uint8Array = new Uint8Array(0),
  maxBytes = 800,
): { bytes: Uint8Array; ended: boolean; stuck: boolean } {
  let state: AutomatonState = startState(grammar);
  for (const byte of prefix) state = stepState(state, byte) as AutomatonState;
  const bytes: number[] = [...prefix];
  const weight = (byte: number) =>
    byte === 0x22 || byte === 0x7d || byte === 0x5d ? 25 : byte === 0x2c ? 4 : byte < 0x80 ? 1 : 0.3;
  while (bytes.length < maxBytes) {
    if (stateAccepts(state) && rng.next() < 0.5)
      return { bytes: Uint8Array.from(bytes), ended: true, stuck: false };
    const options: [number, AutomatonState][] = [];
    for (let byte = 0; byte < 256; byte++) {
      const next = stepState(state, byte);
      if (next) options.push([byte, next]);
    }
    if (options.length === 0) {
      const ended = stateAccepts(state);
      return { bytes: Uint8Array.from(bytes), ended, stuck: !ended };
    }
    let roll = rng.next() * options.reduce((sum, [byte]) => sum + weight(byte), 0);
    let chosen = options[options.length - 1] as [number, AutomatonState];
    for (const option of options) {
      roll -= weight(option[0]);
      if (roll <= 0) {
        chosen = option;
        break;
      }
    }
    bytes.push(chosen[0]);
    state = chosen[1];
  }
  return { bytes: Uint8Array.from(bytes), ended: false, stuck: false };
}
