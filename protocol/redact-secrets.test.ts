import { describe, expect, it } from 'vitest';
import { redactSecrets } from './redact-secrets.ts';

describe('redactSecrets', () => {
  it('masks a URL password and keeps user, host, port and database', () => {
    expect(redactSecrets('postgres://alice:s3cret@db.example.com:5432/app')).toBe(
      'postgres://alice:***@db.example.com:5432/app',
    );
    expect(redactSecrets('connect to postgresql://:only-pw@10.0.0.1/app failed')).toBe(
      'connect to postgresql://:***@10.0.0.1/app failed',
    );
  });

  it('masks a password that holds an unencoded @ or /', () => {
    expect(redactSecrets('postgres://bob:p@ss/w0rd@host/db')).toBe('postgres://bob:***@host/db');
  });

  it('masks every URL in a line', () => {
    expect(redactSecrets('from https://u:a@x/v1 to https://v:b@y/v1')).toBe(
      'from https://u:***@x/v1 to https://v:***@y/v1',
    );
  });

  it('leaves URLs without a password as they are', () => {
    for (const text of [
      'postgres://alice@db/app',
      'http://127.0.0.1:8000/v1',
      'see http://host:8080/path?q=1',
    ]) {
      expect(redactSecrets(text)).toBe(text);
    }
  });

  it('masks secret query and connection-string parameters', () => {
    expect(redactSecrets('postgres://db/app?sslmode=require&password=hunter2&user=x')).toBe(
      'postgres://db/app?sslmode=require&password=***&user=x',
    );
    expect(redactSecrets("host=db port=5432 password='two words' dbname=app")).toBe(
      'host=db port=5432 password=*** dbname=app',
    );
    expect(redactSecrets('https://api.example.com/v1?api_key=abc123&token=t0k')).toBe(
      'https://api.example.com/v1?api_key=***&token=***',
    );
  });

  it('masks HTTP bearer and basic credentials', () => {
    expect(redactSecrets('Authorization: Bearer sk-abc.DEF_123=')).toBe('Authorization: Bearer ***');
    expect(redactSecrets('authorization=Basic YWxhZGRpbjpvcGVuc2VzYW1l')).toBe('authorization=Basic ***');
  });

  it('is idempotent and leaves plain text alone', () => {
    const once = redactSecrets('postgres://a:b@h/d password=x Bearer y');
    expect(redactSecrets(once)).toBe(once);
    expect(redactSecrets('store unavailable: connect ECONNREFUSED 127.0.0.1:5432')).toBe(
      'store unavailable: connect ECONNREFUSED 127.0.0.1:5432',
    );
  });
});
