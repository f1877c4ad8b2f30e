// The tensor names and shapes of a Hugging Face Llama/Qwen2/Qwen3 causal-LM checkpoint, derived from
// its config (transformers' `LlamaForCausalLM` / `Qwen2ForCausalLM` / `Qwen3ForCausalLM` state-dict
// keys; Linear weights are stored [out_features, in_features]).
import type { ModelConfig, Projection } from './hf-config.ts';
import { hasQkNorm, projections } from './hf-config.ts';

/** [out, in] of each projection. */
export function projectionShape(config: ModelConfig, projection: Projection): readonly [number, number] {
  const { hiddenSize: d, intermediateSize: f, numHeads, numKvHeads, headDim } = config;
  switch (projection) {
    case 'q_proj':
      return [numHeads * headDim, d];
    case 'k_proj':
    case 'v_proj':
      return [numKvHeads * headDim, d];
    case 'o_proj':
      return [d, numHeads * headDim];
    case 'gate_proj':
    case 'up_proj':
      return [f, d];
    case 'down_proj':
      return [d, f];
  }
}

/** `self_attn` or `mlp`: the submodule a projection lives in. */
export function projectionModule(projection: Projection): 'self_attn' | 'mlp' {
  return projection === 'gate_proj' || projection === 'up_proj' || projection === 'down_proj'
    ? 'mlp'
    : 'self_attn';
}

export function layerPrefix(layer: number): string {
  return `model.layers.${layer}`;
}

/** Every tensor the checkpoint must hold, name → shape, in state-dict order. */
export function expectedWeights(config: ModelConfig): Map<string, readonly number[]> {
  const names = new Map<string, readonly number[]>();
  names.set('model.embed_tokens.weight', [config.vocabSize, config.hiddenSize]);
  for (let layer = 0; layer < config.numLayers; layer++) {
    const prefix = layerPrefix(layer);
    for (const projection of projections) {
      const [out, input] = projectionShape(config, projection);
      const base = `${prefix}.${projectionModule(projection)}.${projection}`;
      names.set(`${base}.weight`, [out, input]);
      if (config.bias[projection]) names.set(`${base}.bias`, [out]);
    }
    if (hasQkNorm(config)) {
      names.set(`${prefix}.self_attn.q_norm.weight`, [config.headDim]);
      names.set(`${prefix}.self_attn.k_norm.weight`, [config.headDim]);
    }
    names.set(`${prefix}.input_layernorm.weight`, [config.hiddenSize]);
    names.set(`${prefix}.post_attention_layernorm.weight`, [config.hiddenSize]);
  }
  names.set('model.norm.weight', [config.hiddenSize]);
  if (!config.tieWordEmbeddings) names.set('lm_head.weight', [config.vocabSize, config.hiddenSize]);
  return names;
}

/** RMSNorm weights (initialised to 1): the layer norms, Qwen3's q/k norms and the final norm. */
export function isNormWeight(name: string): boolean {
  return name.endsWith('layernorm.weight') || name.endsWith('_norm.weight') || name === 'model.norm.weight';
}

/** Names a checkpoint may hold that the model does not use: transformers ignores them on load too
 * (old Llama exports kept the rotary `inv_freq` buffers; tied checkpoints sometimes keep `lm_head`). */
export function isIgnorableWeight(name: string, config: ModelConfig): boolean {
  if (/^model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq$/.test(name)) return true;
  return config.tieWordEmbeddings && name === 'lm_head.weight';
}
