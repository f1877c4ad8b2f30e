// The Worker's store choice from its bindings. Choosing opens nothing, so these need no database;
// opening each kind inside workerd is test/workerd/'s (Neon) and test/workerd/hyperdrive/'s.
import { describe, expect, it } from 'vitest';
import { EdgeConfigError } from '../edge-config.ts';
import { workerStore } from './worker-store.ts';

const hyperdrive = { connectionString: 'postgresql://user:secret@0123.hyperdrive.local:5432/edgerl' };
const databaseUrl = 'postgres://neon-user:secret@ep-example.neon.tech/edgerl';

describe('workerStore', () => {
  it('takes the HYPERDRIVE binding over DATABASE_URL, and DATABASE_URL without it', () => {
    expect(workerStore({ HYPERDRIVE: hyperdrive, DATABASE_URL: databaseUrl }).kind).toBe('hyperdrive');
    expect(workerStore({ HYPERDRIVE: hyperdrive }).kind).toBe('hyperdrive');
    expect(workerStore({ DATABASE_URL: databaseUrl, NEON_DEV_WS_PROXY: '127.0.0.1:5480' }).kind).toBe('neon');
  });

  it('names both ways to configure a store when neither is there (a blank secret counts as unset)', () => {
    for (const env of [{}, { DATABASE_URL: '' }]) {
      const attempt = () => workerStore(env);
      expect(attempt).toThrow(EdgeConfigError);
      expect(attempt).toThrow(/HYPERDRIVE binding.*\[\[hyperdrive\]\].*DATABASE_URL/);
    }
  });

  it('refuses a HYPERDRIVE of another kind instead of falling back to DATABASE_URL', () => {
    for (const binding of [{}, { connectionString: '' }, { connectionString: 42 }]) {
      const attempt = () =>
        workerStore({ HYPERDRIVE: binding as unknown as typeof hyperdrive, DATABASE_URL: databaseUrl });
      expect(attempt).toThrow(EdgeConfigError);
      expect(attempt).toThrow(/HYPERDRIVE must be a Hyperdrive binding/);
    }
  });

  it('refuses a Hyperdrive connection string that is not postgres:// when opened, without connecting', async () => {
    const store = workerStore({ HYPERDRIVE: { connectionString: 'mysql://user:secret@host/db' } });
    await expect(store.open()).rejects.toThrow(
      /HYPERDRIVE binding must give a postgres:\/\/ connection string/,
    );
  });
});
