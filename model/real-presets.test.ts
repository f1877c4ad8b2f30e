// The real Qwen presets: edgerl's own parser accepts each config.json, and the model it describes has
// the published shape and parameter count (no weights are written here: see init-model.test.ts for a
// directory, and docs/model-runtime.md for the hand-run 0.5B writes loaded in transformers).
import { describe, expect, it } from 'vitest';
import { hasQkNorm, parseHfConfig } from './hf-config.ts';
import { presetArchitecture } from './init-model-dir.ts';
import { parameterCount } from './init-model.ts';
import {
  isRealPreset,
  type RealPreset,
  realPresetConfig,
  realPresetConfigJson,
  realPresets,
} from './real-presets.ts';
import { expectedWeights } from './weight-names.ts';

/**
 * Parameter counts, embedding included once when tied. Each equals the model card's rounded figure
 * (total, non-embedding): Qwen2.5-0.5B-Instruct 0.49B / 0.36B, -1.5B-Instruct 1.54B / 1.31B,
 * -7B-Instruct 7.61B / 6.53B, Qwen3-0.6B 0.6B / 0.44B; transformers 5.18's
 * AutoModelForCausalLM.from_config on the meta device counts the same four numbers.
 */
const counts: Record<RealPreset, { total: number; nonEmbedding: number }> = {
  // By hand: per layer q 896·896 + 896 = 803,712, k and v 128·896 + 128 = 114,816 each, o 896·896 =
  // 802,816, gate/up/down 3·4864·896 = 13,074,432, two norms 1,792 → 14,912,384; × 24 = 357,897,216,
  // plus the final norm 896 = 357,898,112; plus the tied embedding 151936·896 = 136,134,656.
  'qwen2.5-0.5b': { total: 494_032_768, nonEmbedding: 357_898_112 },
  'qwen2.5-1.5b': { total: 1_543_714_304, nonEmbedding: 1_310_340_608 },
  'qwen2.5-7b': { total: 7_615_616_512, nonEmbedding: 6_525_621_760 },
  'qwen3-0.6b': { total: 596_049_920, nonEmbedding: 440_467_456 },
};

describe('real presets', () => {
  it.each(Object.keys(realPresets) as RealPreset[])('%s: the published parameter count', (preset) => {
    const config = realPresetConfig(preset);
    const embedding = config.vocabSize * config.hiddenSize;
    expect(parameterCount(config)).toBe(counts[preset].total);
    expect(parameterCount(config) - embedding * (config.tieWordEmbeddings ? 1 : 2)).toBe(
      counts[preset].nonEmbedding,
    );
  });

  it('writes config.json that the parser reads back to the same model, with the chosen dtype', () => {
    for (const preset of Object.keys(realPresets) as RealPreset[]) {
      const json = realPresetConfigJson(preset, 'bfloat16');
      expect(json.torch_dtype).toBe('bfloat16');
      expect(parseHfConfig(json)).toEqual(realPresetConfig(preset));
    }
  });

  it('has the published shapes', () => {
    expect(realPresetConfig('qwen2.5-0.5b')).toMatchObject({
      architecture: 'qwen2',
      vocabSize: 151936,
      hiddenSize: 896,
      intermediateSize: 4864,
      numLayers: 24,
      numHeads: 14,
      numKvHeads: 2,
      headDim: 64,
      ropeTheta: 1e6,
      rmsNormEps: 1e-6,
      tieWordEmbeddings: true,
      maxPositionEmbeddings: 32768,
      bosTokenId: 151643,
      eosTokenIds: [151645],
      padTokenId: null,
    });
    expect(realPresetConfig('qwen2.5-1.5b')).toMatchObject({ hiddenSize: 1536, numLayers: 28, numHeads: 12 });
    // The 7B has a larger (padded) vocabulary and its own lm_head.
    const seven = realPresetConfig('qwen2.5-7b');
    expect(seven).toMatchObject({
      vocabSize: 152064,
      hiddenSize: 3584,
      numKvHeads: 4,
      tieWordEmbeddings: false,
    });
    expect(expectedWeights(seven).get('lm_head.weight')).toEqual([152064, 3584]);
    // Qwen3-0.6B: head_dim 128 with 16 heads, so q_proj maps 1024 → 2048, plus per-head q/k norms.
    const qwen3 = realPresetConfig('qwen3-0.6b');
    expect(qwen3).toMatchObject({ architecture: 'qwen3', headDim: 128, maxPositionEmbeddings: 40960 });
    expect(hasQkNorm(qwen3)).toBe(true);
    const weights = expectedWeights(qwen3);
    expect(weights.get('model.layers.0.self_attn.q_proj.weight')).toEqual([2048, 1024]);
    expect(weights.get('model.layers.0.self_attn.o_proj.weight')).toEqual([1024, 2048]);
    expect(weights.get('model.layers.27.self_attn.k_norm.weight')).toEqual([128]);
    expect(weights.has('model.layers.0.self_attn.q_proj.bias')).toBe(false);
  });

  it('fixes the architecture: a conflicting one is refused, naming the model', () => {
    expect(presetArchitecture('qwen3-0.6b')).toBe('qwen3');
    expect(presetArchitecture('qwen2.5-7b', 'qwen2')).toBe('qwen2');
    expect(() => presetArchitecture('qwen3-0.6b', 'llama')).toThrow(
      /qwen3-0.6b is Qwen\/Qwen3-0.6B, a qwen3 model; it cannot be built as llama/,
    );
    expect(presetArchitecture('tiny')).toBe('qwen2');
    expect(presetArchitecture('small', 'qwen3')).toBe('qwen3');
    expect(isRealPreset('tiny')).toBe(false);
  });
});
