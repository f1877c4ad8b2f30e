import { describe, expect, it } from 'vitest';
import { AdapterRegistry } from './adapter-registry.ts';
import { ServeError } from './serve-error.ts';

describe('AdapterRegistry', () => {
  it('resolves the base model, published adapters, and 404s anything else', () => {
    const registry = new AdapterRegistry('base');
    registry.publish({ name: 'a', key: registry.nextKey('a'), path: '/a', created: 1 });
    expect(registry.resolve(undefined)).toEqual({ kind: 'base' });
    expect(registry.resolve('base')).toEqual({ kind: 'base' });
    expect(registry.resolve('a')).toMatchObject({ kind: 'adapter', entry: { name: 'a', key: 'a#1' } });
    expect(() => registry.resolve('b')).toThrow(ServeError);
    expect(() => registry.resolve('b')).toThrow('The model `b` does not exist.');
  });

  it('frees retired weights only when the last lease ends', () => {
    const registry = new AdapterRegistry('base');
    registry.publish({ name: 'a', key: registry.nextKey('a'), path: '/a', created: 1 });
    const target = registry.resolve('a');
    if (target.kind !== 'adapter') throw new Error('expected an adapter');
    registry.lease(target.entry);
    registry.lease(target.entry);
    expect(registry.retire('a')).toBe(target.entry);
    expect(registry.has('a')).toBe(false);
    expect(registry.release(target.entry)).toBe(false);
    expect(registry.release(target.entry)).toBe(true);
    expect(() => registry.release(target.entry)).toThrow(/released more often than leased/);
    expect(registry.retire('a')).toBeUndefined();
  });

  it('replaces an entry in place under a new key, retiring the old one', () => {
    const registry = new AdapterRegistry('base');
    registry.publish({ name: 'a', key: registry.nextKey('a'), path: '/v1', created: 1 });
    const previous = registry.publish({ name: 'a', key: registry.nextKey('a'), path: '/v2', created: 2 });
    expect(previous).toMatchObject({ key: 'a#1', retired: true });
    expect(registry.list().map((entry) => [entry.key, entry.path])).toEqual([['a#2', '/v2']]);
  });
});
