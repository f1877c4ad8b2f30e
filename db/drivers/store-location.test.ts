import { describe, expect, it } from 'vitest';
import { redactUrl, storeLocation } from './store-location.ts';

describe('storeLocation', () => {
  it('chooses the driver from the URL', () => {
    expect(storeLocation(undefined, '/d')).toEqual({ kind: 'embedded', dataDir: '/d' });
    expect(storeLocation('', '/d')).toEqual({ kind: 'embedded', dataDir: '/d' });
    expect(storeLocation('memory://', '/d')).toEqual({ kind: 'memory' });
    expect(storeLocation('postgresql://u@h/db', '/d')).toEqual({
      kind: 'server',
      url: 'postgresql://u@h/db',
    });
  });

  it('names an unsupported scheme', () => {
    expect(() => storeLocation('mysql://u@h/db', '/d')).toThrow('unsupported database URL scheme "mysql:"');
  });
});

describe('redactUrl', () => {
  it('hides the password and keeps the rest', () => {
    expect(redactUrl('postgres://alice:s3cret@db.example.com:5432/app')).toBe(
      'postgres://alice:***@db.example.com:5432/app',
    );
    expect(redactUrl('postgres://alice@db/app')).toBe('postgres://alice@db/app');
  });
});
