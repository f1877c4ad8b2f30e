import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { nodePostgresStore } from './drivers/node-postgres-store.ts';
import { StoreError } from './errors.ts';
import { isStoreUnreachable } from './store-unreachable.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isStoreUnreachable', () => {
  it('recognises socket errors, connection SQLSTATEs and pg lost-connection messages down the cause chain', () => {
    expect(isStoreUnreachable(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(
      isStoreUnreachable(
        new Error('Failed query: select 1', { cause: withCode('read ECONNRESET', 'ECONNRESET') }),
      ),
    ).toBe(true);
    expect(isStoreUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isStoreUnreachable(withCode('the database system is starting up', '57P03'))).toBe(true);
    expect(isStoreUnreachable(withCode('terminating connection due to administrator command', '57P01'))).toBe(
      true,
    );
    expect(isStoreUnreachable(withCode('connection failure', '08006'))).toBe(true);
    expect(
      isStoreUnreachable(new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')])),
    ).toBe(true);
  });

  it('leaves query faults, store refusals and plain bugs alone', () => {
    expect(isStoreUnreachable(withCode('duplicate key value', '23505'))).toBe(false);
    expect(isStoreUnreachable(withCode('syntax error', '42601'))).toBe(false);
    expect(
      isStoreUnreachable(
        new StoreError('conflict', 'run is finished', { cause: new Error('Connection terminated') }),
      ),
    ).toBe(false);
    expect(isStoreUnreachable(new TypeError('x is undefined'))).toBe(false);
    expect(isStoreUnreachable('ECONNREFUSED')).toBe(false);
  });

  it('recognises what a real pg pool throws for a refused port and a cut connection', async () => {
    // A port nothing listens on: bind one, note it, close it.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = nodePostgresStore({ url: `postgres://u:secret@127.0.0.1:${port}/db`, maxConnections: 1 });
    const refusal = await refused.getPolicy({ policyName: 'any' }).catch((error: unknown) => error);
    await refused.close();
    expect(isStoreUnreachable(refusal)).toBe(true);

    // A server that accepts and hangs up at once: the driver's "Connection terminated" family.
    const hangUp = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
    const cut = nodePostgresStore({
      url: `postgres://u@127.0.0.1:${(hangUp.address() as AddressInfo).port}/db`,
      maxConnections: 1,
    });
    const lost = await cut.getPolicy({ policyName: 'any' }).catch((error: unknown) => error);
    await cut.close();
    await new Promise<void>((resolve) => hangUp.close(() => resolve()));
    expect(isStoreUnreachable(lost)).toBe(true);
  });
});
