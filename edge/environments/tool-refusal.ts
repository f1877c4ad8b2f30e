// What a tool throws to refuse a request on purpose (a write query, a runaway query): the episode
// records it as a `refused` observation instead of a generic tool failure.

/**
 * A registry-wide symbol marks refusals, and `instanceof` checks for it rather than for this class:
 * a user's environment module may load its own copy of this file (a compiled CLI beside the
 * TypeScript `edgerl/environment`), and its refusals must still read as refusals.
 */
const refusalMark = Symbol.for('edgerl.tool-refusal');

export class ToolRefusal extends Error {
  override readonly name = 'ToolRefusal';
  readonly code = 'tool-refused';
  readonly [refusalMark] = true;

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && refusalMark in value;
  }
}
