// Adapter classification on adapter infos as Dawn reports them: lavapipe's is the one printed by
// webgpu@0.6.2 over Mesa 25.0.7 here; the others follow the WebGPU spec's fields with the names those
// drivers use (SwiftShader, Microsoft's WARP, an NVIDIA card).
import { describe, expect, it } from 'vitest';
import { describeAdapter, formatBytes, summarizeAdapter } from './webgpu-adapter.ts';

const limits = { maxBufferSize: 4294967295, maxStorageBufferBindingSize: 134217728 };

describe('summarizeAdapter', () => {
  it('marks lavapipe as software, by the fallback flag first', () => {
    const lavapipe = {
      vendor: 'mesa',
      architecture: 'software',
      device: 'llvmpipe-llvm-15-0-6-256-bits-',
      description: 'llvmpipe: Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6) 0.0.1',
      isFallbackAdapter: true,
    };
    expect(summarizeAdapter(lavapipe, limits)).toMatchObject({
      software: true,
      softwareSignal: 'fallback adapter',
    });
    // Without the flag (older bindings) the architecture, then the device name still give it away.
    expect(summarizeAdapter({ ...lavapipe, isFallbackAdapter: undefined }, limits).softwareSignal).toBe(
      'architecture "software"',
    );
    expect(
      summarizeAdapter({ ...lavapipe, isFallbackAdapter: undefined, architecture: '' }, limits)
        .softwareSignal,
    ).toBe('device "llvmpipe"');
  });

  it('marks SwiftShader and WARP as software by name', () => {
    const swiftshader = {
      vendor: 'google',
      architecture: 'swiftshader',
      device: 'SwiftShader Device (Subzero)',
    };
    expect(summarizeAdapter(swiftshader, limits).softwareSignal).toBe('device "SwiftShader"');
    const warp = { vendor: 'microsoft', description: 'Microsoft Basic Render Driver' };
    expect(summarizeAdapter(warp, limits).software).toBe(true);
  });

  it('takes a GPU for hardware', () => {
    const nvidia = {
      vendor: 'nvidia',
      architecture: 'hopper',
      device: '',
      description: 'NVIDIA H200',
      isFallbackAdapter: false,
    };
    const summary = summarizeAdapter(nvidia, {
      maxBufferSize: 2 ** 34,
      maxStorageBufferBindingSize: 2 ** 32 - 1,
    });
    expect(summary).toMatchObject({ software: false, softwareSignal: '' });
    expect(describeAdapter(summary)).toBe('NVIDIA H200 [nvidia/hopper, hardware, binding ≤ 4.0 GiB]');
  });

  it('describes an adapter in one line, naming what made it software', () => {
    const summary = summarizeAdapter({ device: 'llvmpipe (LLVM 15)', isFallbackAdapter: true }, limits);
    expect(describeAdapter(summary)).toBe(
      'llvmpipe (LLVM 15) [software (fallback adapter), binding ≤ 128 MiB]',
    );
    expect(describeAdapter(summarizeAdapter({}, limits))).toBe(
      'unnamed adapter [hardware, binding ≤ 128 MiB]',
    );
  });
});

describe('formatBytes', () => {
  it('uses MiB below 1 GiB and GiB with one decimal above', () => {
    expect(formatBytes(134217728)).toBe('128 MiB'); // 2^27
    expect(formatBytes(2 ** 30 - 2 ** 20)).toBe('1023 MiB');
    expect(formatBytes(4294967295)).toBe('4.0 GiB'); // 2^32 − 1
    expect(formatBytes(1.5 * 2 ** 30)).toBe('1.5 GiB');
  });
});
