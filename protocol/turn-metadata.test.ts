// The turn reader: it refuses versions it does not read with a typed error, checks the metadata of
// the versions it does, and keeps keys it does not know. Fixtures of stored version-1 records are
// read in test/store/turn-records.test.ts.
import { describe, expect, it } from 'vitest';
import { toolErrorCodes, toolErrorMeanings } from './tool-error-code.ts';
import { turnInputSchema } from './turn.ts';
import { readTurnMetadata, TurnMetadataError } from './turn-metadata.ts';
import { checkTurnVersion, TURN_SCHEMA_VERSION, TurnVersionError } from './turn-version.ts';

const trajectoryId = '6f1c2a3e-4b5d-4e6f-8a7b-9c0d1e2f3a4b';

function refusal(version: unknown): unknown {
  try {
    readTurnMetadata({ schemaVersion: version, metadata: { finishReason: 'stop' } });
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('readTurnMetadata', () => {
  it('reads the version this code writes', () => {
    expect(TURN_SCHEMA_VERSION).toBe(1);
    expect(readTurnMetadata({ schemaVersion: 1, metadata: { finishReason: 'length', attempts: 2 } })).toEqual(
      {
        finishReason: 'length',
        attempts: 2,
      },
    );
    expect(readTurnMetadata({ schemaVersion: 1, metadata: null })).toEqual({});
  });

  it('refuses a version from a newer edgerl, and anything that is not a version, with a typed error', () => {
    for (const version of [2, 0, '1', undefined, 1.5]) {
      const error = refusal(version);
      expect(error).toBeInstanceOf(TurnVersionError);
      expect(error).toMatchObject({ code: 'unsupported-turn-version', version });
    }
    expect(() => checkTurnVersion(2)).toThrow('turn record version 2 is not one this edgerl reads (1)');
  });

  it('refuses metadata whose known keys have the wrong type', () => {
    const bad = [
      { finishReason: 'exploded' },
      { tokenExact: 'yes' },
      { attempts: 0 },
      { recordedBy: 'cron' },
      [],
    ];
    for (const metadata of bad) {
      expect(() => readTurnMetadata({ schemaVersion: 1, metadata })).toThrow(TurnMetadataError);
    }
  });

  it('keeps keys it does not know, as they are', () => {
    const metadata = { toolName: 'lookup', note: { by: 'a script' } };
    expect(readTurnMetadata({ schemaVersion: 1, metadata })).toEqual(metadata);
  });
});

describe('the turn record', () => {
  const toolTurn = { trajectoryId, index: 3, role: 'tool', content: 'x', toolCallId: 'c1' } as const;

  it('takes every tool error code of the closed set, and nothing else', () => {
    expect(toolErrorCodes).toEqual(Object.keys(toolErrorMeanings));
    for (const code of toolErrorCodes) {
      expect(turnInputSchema.safeParse({ ...toolTurn, toolError: code }).success).toBe(true);
    }
    expect(turnInputSchema.safeParse({ ...toolTurn, toolError: 'bad-arguments' }).success).toBe(false);
  });

  it('validates the metadata it is written with', () => {
    const assistant = { trajectoryId, index: 2, role: 'assistant', content: 'hi' } as const;
    expect(turnInputSchema.safeParse({ ...assistant, metadata: { finishReason: 'stop' } }).success).toBe(
      true,
    );
    expect(turnInputSchema.safeParse({ ...assistant, metadata: { finishReason: 'done' } }).success).toBe(
      false,
    );
  });
});
