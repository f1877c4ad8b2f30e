// The base model's weights as TensorFlow.js tensors, laid out for the forward pass: every Linear
// weight transposed once at load ([out, in] → [in, out]) so no matmul needs transposeB (slow on wasm,
// feasibility §10.3), and the projections that read the same input stored side by side (q|k|v,
// gate|up) so each group is one matmul, one bias add and, in the backward pass, one product for
// the input's gradient. Plain tensors, not variables: the base model is frozen.
import * as tf from '@tensorflow/tfjs';
import { hasQkNorm, type ModelConfig, type Projection } from './hf-config.ts';
import type { HostTensor } from './safetensors.ts';
import { tidy } from './tidy.ts';
import { layerPrefix, projectionModule, projectionShape } from './weight-names.ts';

/** Projections that share an input, in the order their outputs sit in the group's product. */
export const projectionGroups = {
  qkv: ['q_proj', 'k_proj', 'v_proj'],
  o: ['o_proj'],
  gateUp: ['gate_proj', 'up_proj'],
  down: ['down_proj'],
} as const satisfies Record<string, readonly Projection[]>;

export type ProjectionGroupName = keyof typeof projectionGroups;

export interface GroupWeights {
  readonly members: readonly Projection[];
  /** The members' Wᵀ side by side: [in, Σ out]. */
  readonly weightT: tf.Tensor2D;
  /** The members' biases side by side (zeros for a member without one), or null if none has one. */
  readonly bias: tf.Tensor1D | null;
  /** out of each member, in order. */
  readonly sizes: readonly number[];
}

export interface LayerWeights {
  readonly inputNorm: tf.Tensor1D; // [D]
  readonly postAttentionNorm: tf.Tensor1D; // [D]
  /** Qwen3's per-head query and key RMSNorm weights, [hd] each; null for Llama and Qwen2. */
  readonly qkNorm: { readonly q: tf.Tensor1D; readonly k: tf.Tensor1D } | null;
  readonly groups: Readonly<Record<ProjectionGroupName, GroupWeights>>;
}

export interface DecoderWeights {
  /** Token embeddings [V, D] (looked up with gather, never differentiated). */
  readonly embed: tf.Tensor2D;
  readonly layers: readonly LayerWeights[];
  readonly finalNorm: tf.Tensor1D; // [D]
  /** Output projection [V, D]: the embedding matrix itself when tied. Used by the logprob gradient. */
  readonly lmHead: tf.Tensor2D;
  /** Its transpose [D, V], for the forward matmul. */
  readonly lmHeadT: tf.Tensor2D;
}

/** Uploads host tensors (as loaded by load-weights.ts or made by init-model.ts). */
export function toDecoderWeights(config: ModelConfig, host: ReadonlyMap<string, HostTensor>): DecoderWeights {
  const get = (name: string): HostTensor => {
    const tensor = host.get(name);
    if (!tensor) throw new Error(`weight "${name}" is missing`);
    return tensor;
  };
  const vector = (name: string) => tf.tensor1d(get(name).data);
  const matrix = (name: string) => {
    const { shape, data } = get(name);
    return tf.tensor2d(data, [shape[0] as number, shape[1] as number]);
  };
  const group = (prefix: string, members: readonly Projection[]): GroupWeights =>
    tidy(() => {
      const names = members.map((projection) => `${prefix}.${projectionModule(projection)}.${projection}`);
      const sizes = members.map((projection) => projectionShape(config, projection)[0]);
      const weightTs = names.map((name) => tf.transpose(matrix(`${name}.weight`)));
      const withBias = members.some((projection) => config.bias[projection]);
      const biases = members.map((projection, index) =>
        config.bias[projection] ? vector(`${names[index]}.bias`) : tf.zeros([sizes[index] as number]),
      );
      return {
        members,
        weightT: (weightTs.length === 1 ? weightTs[0] : tf.concat(weightTs, 1)) as tf.Tensor2D,
        bias: withBias ? ((biases.length === 1 ? biases[0] : tf.concat(biases)) as tf.Tensor1D) : null,
        sizes,
      };
    });
  const layers: LayerWeights[] = [];
  for (let layer = 0; layer < config.numLayers; layer++) {
    const prefix = layerPrefix(layer);
    layers.push({
      inputNorm: vector(`${prefix}.input_layernorm.weight`),
      postAttentionNorm: vector(`${prefix}.post_attention_layernorm.weight`),
      qkNorm: hasQkNorm(config)
        ? { q: vector(`${prefix}.self_attn.q_norm.weight`), k: vector(`${prefix}.self_attn.k_norm.weight`) }
        : null,
      groups: {
        qkv: group(prefix, projectionGroups.qkv),
        o: group(prefix, projectionGroups.o),
        gateUp: group(prefix, projectionGroups.gateUp),
        down: group(prefix, projectionGroups.down),
      },
    });
  }
  const embed = matrix('model.embed_tokens.weight');
  const lmHead = config.tieWordEmbeddings ? embed : matrix('lm_head.weight');
  return {
    embed,
    layers,
    finalNorm: vector('model.norm.weight'),
    lmHead,
    lmHeadT: tf.tidy(() => tf.transpose(lmHead) as tf.Tensor2D),
  };
}

/** Every distinct tensor, for disposal and for "base weights unchanged" checks. */
export function decoderTensors(weights: DecoderWeights): tf.Tensor[] {
  const all: tf.Tensor[] = [weights.embed, weights.finalNorm, weights.lmHeadT];
  if (weights.lmHead !== weights.embed) all.push(weights.lmHead);
  for (const layer of weights.layers) {
    all.push(layer.inputNorm, layer.postAttentionNorm);
    if (layer.qkNorm) all.push(layer.qkNorm.q, layer.qkNorm.k);
    for (const { weightT, bias } of Object.values(layer.groups)) {
      all.push(weightT);
      if (bias) all.push(bias);
    }
  }
  return all;
}

export function disposeDecoderWeights(weights: DecoderWeights): void {
  tf.dispose(decoderTensors(weights));
}
