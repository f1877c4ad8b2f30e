// `edgerl serve-model --model DIR`: the local inference endpoint that speaks vLLM's OpenAI-compatible
// API (chat and text completions, runtime LoRA loading) over the TensorFlow.js runtime. Runs until
// SIGINT or SIGTERM. Reads EDGERL_BACKEND and EDGERL_API_KEY here, the entry point.
import { serveModel } from '../../serve/serve-model.ts';
import { defineCommand, intFlag, stringFlag, UsageError } from '../command.ts';

export const serveModelCommand = defineCommand({
  name: ['serve-model'],
  summary: 'Serve a model and its LoRA adapters with a vLLM-compatible OpenAI API (chat, completions, LoRA)',
  usage: `Usage: edgerl serve-model --model DIR [options]

Serves GET /v1/models, POST /v1/chat/completions, POST /v1/completions,
POST /v1/load_lora_adapter, POST /v1/unload_lora_adapter and GET /health, as vLLM does.
Concurrent requests decode together (continuous batching).

Options:
  --model DIR               Hugging Face model directory (config.json, safetensors, tokenizer)
  --adapters DIR            serve each subdirectory holding an adapter_config.json, under its name
  --host ADDR               interface to listen on (default 127.0.0.1; 0.0.0.0 exposes it)
  --port N                  TCP port (default 8000; 0 picks a free one)
  --api-key KEY             require "Authorization: Bearer KEY" on /v1 routes (or EDGERL_API_KEY)
  --served-model-name NAME  the base model's name in requests (default: the --model path, as vLLM)
  --max-model-len N         longest prompt + output (default: the model's max_position_embeddings)
  --max-num-seqs N          most sequences decoding at once (default 64)
  --backend NAME            node-gpu | webgpu | webgpu:software | node | wasm | cpu (or EDGERL_BACKEND;
                            default: first available, in that order, webgpu:software only on request)`,
  options: {
    model: { type: 'string' },
    adapters: { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    'api-key': { type: 'string' },
    'served-model-name': { type: 'string' },
    'max-model-len': { type: 'string' },
    'max-num-seqs': { type: 'string' },
    backend: { type: 'string' },
  },
  async run({ values, env, stdout, stderr }) {
    const modelDir = stringFlag(values, 'model');
    if (!modelDir) throw new UsageError('--model DIR is required');
    const maxModelLen = stringFlag(values, 'max-model-len');
    const serving = await serveModel({
      modelDir,
      adaptersDir: stringFlag(values, 'adapters'),
      host: stringFlag(values, 'host') ?? '127.0.0.1',
      port: intFlag(values, 'port', 8000, { min: 0, max: 65535 }),
      apiKey: stringFlag(values, 'api-key') ?? (env.EDGERL_API_KEY || undefined),
      servedModelName: stringFlag(values, 'served-model-name'),
      maxModelLen: maxModelLen === undefined ? undefined : intFlag(values, 'max-model-len', 0, { min: 2 }),
      maxNumSeqs: intFlag(values, 'max-num-seqs', 64, { min: 1, max: 4096 }),
      backend: stringFlag(values, 'backend') ?? (env.EDGERL_BACKEND || undefined),
      log: (line) => stderr.write(`${line}\n`),
    });
    const adapters = serving.engine.registry.list().map((entry) => entry.name);
    stdout.write(
      `edgerl serve-model: serving "${serving.baseName}"${adapters.length > 0 ? ` and adapters ${adapters.join(', ')}` : ''} on ${serving.url}/v1\n`,
    );
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    stdout.write('edgerl serve-model: shutting down\n');
    await serving.close();
    return 0;
  },
});
