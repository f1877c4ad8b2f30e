// The base model's weights as TensorFlow.js tensors, laid out for the forward pass: every Linear
// weight transposed once at load ([out, in] → [in, out]) so no matmul needs transposeB (slow on wasm,
// feasibility §10.3). Plain tensors, not variables: the base model is frozen.
import * as tf from '@tensorflow/tfjs';
import type { ModelConfig, Projection } from './hf-config.ts';
import { projections } from './hf-config.ts';
import type { HostTensor } from './safetensors.ts';
import { layerPrefix, projectionModule } from './weight-names.ts';

export interface LinearWeights {
  /** Wᵀ [in, out]. */
  readonly weightT: tf.Tensor2D;
  readonly bias: tf.Tensor1D | null;
}

export interface LayerWeights {
  readonly inputNorm: tf.Tensor1D; // [D]
  readonly postAttentionNorm: tf.Tensor1D; // [D]
  readonly projections: Readonly<Record<Projection, LinearWeights>>;
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
  const transposed = (name: string) => tf.tidy(() => tf.transpose(matrix(name)) as tf.Tensor2D);
  const layers: LayerWeights[] = [];
  for (let layer = 0; layer < config.numLayers; layer++) {
    const prefix = layerPrefix(layer);
    const linear = {} as Record<Projection, LinearWeights>;
    for (const projection of projections) {
      const base = `${prefix}.${projectionModule(projection)}.${projection}`;
      linear[projection] = {
        weightT: transposed(`${base}.weight`),
        bias: config.bias[projection] ? vector(`${base}.bias`) : null,
      };
    }
    layers.push({
      inputNorm: vector(`${prefix}.input_layernorm.weight`),
      postAttentionNorm: vector(`${prefix}.post_attention_layernorm.weight`),
      projections: linear,
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
    for (const projection of projections) {
      const { weightT, bias } = layer.projections[projection];
      all.push(weightT);
      if (bias) all.push(bias);
    }
  }
  return all;
}

export function disposeDecoderWeights(weights: DecoderWeights): void {
  tf.dispose(decoderTensors(weights));
}
