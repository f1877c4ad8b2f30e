// Which adapter each row of a batch uses. One adapter for every row is a single route; a mixed batch
// gets one route per distinct adapter with a 0/1 row mask, so rows that share the base model and rows
// on different adapters run in one forward pass (each route costs an extra rank-r product, cheap).
// Legend: B batch, T positions per row, N = B·T.
import * as tf from '@tensorflow/tfjs';
import type { LoraRoute } from './decoder.ts';
import type { LoraAdapter } from './lora.ts';

export function loraRoutes(perRow: readonly (LoraAdapter | null)[], tokensPerRow: number): LoraRoute[] {
  const distinct = [...new Set(perRow)];
  if (distinct.length === 1) return distinct[0] ? [{ adapter: distinct[0], rowScale: null }] : [];
  return distinct
    .filter((adapter): adapter is LoraAdapter => adapter !== null)
    .map((adapter) => {
      const scale = new Float32Array(perRow.length * tokensPerRow);
      perRow.forEach((rowAdapter, row) => {
        if (rowAdapter === adapter) scale.fill(1, row * tokensPerRow, (row + 1) * tokensPerRow);
      });
      return { adapter, rowScale: tf.tensor2d(scale, [perRow.length * tokensPerRow, 1]) }; // [N, 1]
    });
}
