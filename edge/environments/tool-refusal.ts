// What a tool throws to refuse a request on purpose (a write query, a runaway query): the episode
// records it as a `refused` observation instead of a generic tool failure.

export class ToolRefusal extends Error {
  override readonly name = 'ToolRefusal';
  readonly code = 'tool-refused';
}
