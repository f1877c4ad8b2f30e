// Which engine does the tensor work and how, as the zod slice of the train config. The torch fields
// are read only by the PyTorch engine (torch/); tfjs's own knob is --workers. None of these changes
// what a run trains, so none enters the run-config hash (trainer/train/run-config-summary.ts).
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { intBetween, oneOf } from '../../protocol/config-fields.ts';
import { engineKinds } from './train-engine.ts';

const section = 'Engine';

export const engineDevices = ['auto', 'cpu', 'cuda'] as const;
export const engineDtypes = ['auto', 'float32', 'bfloat16'] as const;
export const attentionKernels = ['sdpa', 'eager'] as const;
export const engineShardings = ['none', 'fsdp'] as const;

export const engineSettingsSchema = z
  .strictObject({
    kind: documented(oneOf(engineKinds).default('tfjs'), {
      doc: 'where the tensor work runs: tfjs (TensorFlow.js in this process: no set-up, small models) or torch (PyTorch, transformers and PEFT in a Python child: real models, GPUs)',
      source: 'tfjs is embedded; torch needs `npm run setup:torch` (docs/torch-engine.md)',
      flag: 'engine',
      arg: 'NAME',
      section,
    }),
    processes: documented(intBetween(1, 1024).default(1), {
      doc: 'torch: engine processes under torch.distributed (one per GPU, NCCL; gloo on CPU), the whole base model on each and adapter gradients all-reduced, or sharded over them with --engine-sharding fsdp',
      source: "torchrun's one process per device",
      flag: 'engine-processes',
      arg: 'N',
      section,
    }),
    sharding: documented(oneOf(engineShardings).default('none'), {
      doc: 'torch, with --engine-processes N >= 2: none keeps the whole base model on every process; fsdp shards base weights, adapter, gradients and AdamW moments over them (FSDP2), for models one GPU cannot hold',
      source:
        "PyTorch's FSDP2 (torch.distributed.fsdp.fully_shard), one unit per decoder layer; docs/torch-engine.md",
      flag: 'engine-sharding',
      arg: 'NAME',
      section,
    }),
    python: documented(z.string().min(1).optional(), {
      doc: 'torch: the Python interpreter that has torch, transformers, peft and safetensors',
      shownDefault: "the repository's .venv-torch/ (npm run setup:torch)",
      flag: 'torch-python',
      arg: 'PATH',
      env: 'EDGERL_TORCH_PYTHON',
      section,
    }),
    device: documented(oneOf(engineDevices).default('auto'), {
      doc: 'torch: the device; auto takes CUDA when torch sees a GPU, else the CPU',
      flag: 'engine-device',
      arg: 'NAME',
      section,
    }),
    dtype: documented(oneOf(engineDtypes).default('auto'), {
      doc: "torch: the base model's dtype; auto: bfloat16 on a GPU, float32 on the CPU (the adapter and AdamW's moments stay float32)",
      source: 'bf16 weights with fp32 LoRA and optimiser state, as PEFT and TRL train on GPUs',
      flag: 'engine-dtype',
      arg: 'NAME',
      section,
    }),
    gradientCheckpointing: documented(z.boolean().default(true), {
      doc: "torch: recompute each decoder layer's activations in the backward pass instead of keeping them",
      flagDoc: 'torch: keep every activation (faster, far more memory)',
      source: "TRL's GRPOConfig (gradient_checkpointing=True)",
      flag: 'no-gradient-checkpointing',
      sets: false,
      section,
    }),
    logprobChunkTokens: documented(intBetween(1, 1 << 20).default(1024), {
      doc: "torch: positions per chunk of the vocabulary log-softmax; a chunk's [positions, vocabulary] logits are all that is ever held",
      source: 'an edgerl choice: 1,024 × 151,936 float32 logits are 0.6 GB',
      flag: 'logprob-chunk-tokens',
      arg: 'N',
      section,
    }),
    attention: documented(oneOf(attentionKernels).default('sdpa'), {
      doc: "torch: transformers' attention implementation",
      source: "transformers' default (torch's scaled_dot_product_attention)",
      flag: 'engine-attention',
      arg: 'NAME',
      section,
    }),
  })
  .prefault({});

export type EngineSettings = z.output<typeof engineSettingsSchema>;
