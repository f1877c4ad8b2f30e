// Which names the endpoint serves: the base model and the loaded LoRA adapters, each adapter kept in
// the model runtime under an internal key. Sequences lease the adapter they decode with, so an
// unloaded (or replaced, with `load_inplace`) adapter leaves the name at once — new requests get a
// 404 or the new weights — while its weights stay until the last sequence using them ends.
// Bookkeeping only: the engine loads and frees the weights.
import { modelNotFound } from './serve-error.ts';

export interface AdapterEntry {
  /** The name clients use as `model`. */
  readonly name: string;
  /** The key under which the model runtime holds this adapter's weights. */
  readonly key: string;
  /** Directory it was loaded from (`root` in /v1/models). */
  readonly path: string;
  /** Unix seconds when it was loaded. */
  readonly created: number;
  leases: number;
  /** Unloaded or replaced: free the weights when `leases` reaches 0. */
  retired: boolean;
}

export type ModelTarget =
  | { readonly kind: 'base' }
  | { readonly kind: 'adapter'; readonly entry: AdapterEntry };

export class AdapterRegistry {
  private readonly entries = new Map<string, AdapterEntry>();
  private counter = 0;

  constructor(readonly baseName: string) {}

  /** A fresh runtime key for the next load of `name` (distinct from any key still in use). */
  nextKey(name: string): string {
    this.counter += 1;
    return `${name}#${this.counter}`;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  list(): AdapterEntry[] {
    return [...this.entries.values()];
  }

  /** The base model for `undefined`/the base name, else the adapter; 404 for anything else. */
  resolve(model: string | undefined): ModelTarget {
    if (model === undefined || model === this.baseName) return { kind: 'base' };
    const entry = this.entries.get(model);
    if (!entry) throw modelNotFound(model);
    return { kind: 'adapter', entry };
  }

  /** Publishes `entry` under its name; returns the entry it replaces (now retired), if any. */
  publish(entry: Omit<AdapterEntry, 'leases' | 'retired'>): AdapterEntry | undefined {
    const previous = this.entries.get(entry.name);
    if (previous) previous.retired = true;
    this.entries.set(entry.name, { ...entry, leases: 0, retired: false });
    return previous;
  }

  /** Removes `name` from service; returns the retired entry, or undefined when no such name. */
  retire(name: string): AdapterEntry | undefined {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    this.entries.delete(name);
    entry.retired = true;
    return entry;
  }

  lease(entry: AdapterEntry): void {
    entry.leases += 1;
  }

  /** Returns true when the entry's weights may be freed now. */
  release(entry: AdapterEntry): boolean {
    entry.leases -= 1;
    if (entry.leases < 0) throw new Error(`adapter ${entry.key} released more often than leased`);
    return entry.retired && entry.leases === 0;
  }
}
