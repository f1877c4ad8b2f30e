// The version of the turn record (protocol/turn.ts) and the one check every reader makes before
// trusting a stored record's shape. Only versions; the shapes themselves are in turn.ts and turn-metadata.ts.

/** The version this code writes. Bump it when a stored field changes meaning or shape. */
export const TURN_SCHEMA_VERSION = 1;

/** Every version this code can read: the one it writes and every earlier one (fixtures in test/fixtures/turns/). */
export const readableTurnVersions: readonly number[] = [1];

/** A stored record this code cannot read: written by a newer edgerl, or not a turn record at all. */
export class TurnVersionError extends Error {
  override readonly name = 'TurnVersionError';
  readonly code = 'unsupported-turn-version';
  readonly version: unknown;

  constructor(version: unknown) {
    super(
      `turn record version ${JSON.stringify(version)} is not one this edgerl reads (${readableTurnVersions.join(', ')}); ` +
        'a newer edgerl wrote it: upgrade this one',
    );
    this.version = version;
  }
}

/** Throws TurnVersionError unless `version` is one of readableTurnVersions. */
export function checkTurnVersion(version: unknown): void {
  if (typeof version !== 'number' || !readableTurnVersions.includes(version))
    throw new TurnVersionError(version);
}
