import { createRequire } from 'node:module';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { selectBackend, selectedBackend } from './backend.ts';
import { backendFlagHelp, backendPreference } from './backend-names.ts';

function installed(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
}

describe('selectBackend', () => {
  it('rejects an unknown name, listing the choices', async () => {
    await expect(selectBackend({ requested: 'gpu', log: () => {} })).rejects.toThrow(
      /unknown backend "gpu"; choose one of node-gpu, webgpu, webgpu:software, node, wasm, cpu/,
    );
    expect(backendFlagHelp).toBe(
      'node-gpu | webgpu | webgpu:software | node | wasm | cpu (or EDGERL_BACKEND; default: first available of node-gpu → webgpu → node → wasm → cpu)',
    );
  });

  it('takes the first available in order node-gpu → webgpu → node → wasm → cpu, and prints the choice once', async () => {
    expect(backendPreference).toEqual(['node-gpu', 'webgpu', 'node', 'wasm', 'cpu']);
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const first = await selectBackend({ log });
    if (!installed('@tensorflow/tfjs-node-gpu') && !installed('@tensorflow/tfjs-node')) {
      // webgpu only on a hardware adapter (a GPU box); here and in CI, wasm with one reason per skip.
      expect(['webgpu', 'wasm']).toContain(first.choice);
      if (first.choice === 'webgpu') expect(first.hardwareGpu).toBe(true);
      else {
        expect(first.reason).toMatch(
          /^first available; node-gpu: @tensorflow\/tfjs-node-gpu is not installed; webgpu: .+; node: @tensorflow\/tfjs-node is not installed$/,
        );
        expect(first).toMatchObject({ device: 'CPU (WebAssembly, one thread)', hardwareGpu: false });
        expect(tf.getBackend()).toBe('wasm');
      }
    }
    await selectBackend({ log });
    expect(lines).toEqual([`edgerl: tfjs backend ${first.choice} on ${first.device} (${first.reason})`]);
    expect(selectedBackend()).toEqual(first);
  });

  it('honours an explicit request and says why one is unavailable', async () => {
    const lines: string[] = [];
    expect((await selectBackend({ requested: 'cpu', log: (l) => lines.push(l) })).choice).toBe('cpu');
    expect(tf.getBackend()).toBe('cpu');
    expect(lines).toEqual(['edgerl: tfjs backend cpu on CPU (plain JavaScript) (requested)']);
    if (!installed('@tensorflow/tfjs-node')) {
      await expect(selectBackend({ requested: 'node', log: () => {} })).rejects.toThrow(
        /backend "node" is not available: @tensorflow\/tfjs-node is not installed/,
      );
      expect(tf.getBackend()).toBe('cpu'); // a failed request leaves the previous choice in place
    }
  });
});
