// A refusal stays a refusal across copies of its module: a user's environment module may load its own
// copy of tool-refusal.ts beside the one the episode loop checks with `instanceof`.
import { describe, expect, it } from 'vitest';
import { ToolRefusal } from './tool-refusal.ts';

describe('ToolRefusal', () => {
  it('is recognised by its mark, from another copy of the module too, and nothing else is', async () => {
    // The query makes the module loader evaluate the file a second time: a second class.
    const copyUrl = './tool-refusal.ts?copy';
    const copy = (await import(/* @vite-ignore */ copyUrl)) as typeof import('./tool-refusal.ts');
    expect(copy.ToolRefusal).not.toBe(ToolRefusal);
    expect(new copy.ToolRefusal('no') instanceof ToolRefusal).toBe(true);
    expect(new ToolRefusal('no') instanceof ToolRefusal).toBe(true);
    expect(new ToolRefusal('no')).toMatchObject({ name: 'ToolRefusal', code: 'tool-refused', message: 'no' });
    expect(new Error('no') instanceof ToolRefusal).toBe(false);
    const nothing: unknown = null;
    expect(nothing instanceof ToolRefusal).toBe(false);
  });
});
