// `edgerl serve-model --model DIR`: the local inference endpoint that speaks vLLM's OpenAI-compatible
// API (chat and text completions, runtime LoRA loading) over the TensorFlow.js runtime. Runs until
// SIGINT or SIGTERM. Flags, their env fallbacks and the usage text come from serve/serve-config.ts.
import { configFields } from '../../protocol/config-docs.ts';
import { ServeConfigError, type ServeConfigInput, serveConfigSchema } from '../../serve/serve-config.ts';
import { parseServeFault } from '../../serve/serve-fault.ts';
import { defineCommand, UsageError } from '../command.ts';
import { configOptions, readConfigFlags } from '../flags/config-flags.ts';
import { usageOptions } from '../flags/config-usage.ts';
import { untilSignal } from '../until-signal.ts';

const serveFields = configFields(serveConfigSchema);

export const serveModelCommand = defineCommand({
  usage: `Usage: edgerl serve-model --model DIR [options]

Serves GET /v1/models, POST /v1/chat/completions, POST /v1/completions,
POST /v1/load_lora_adapter, POST /v1/unload_lora_adapter and GET /health, as vLLM does.
Concurrent requests decode together (continuous batching).

${usageOptions(serveFields)}`,
  options: configOptions(serveFields),
  async run({ values, env, stdout, stderr }) {
    const { serveModel } = await import('../../serve/serve-model.ts');
    const input = readConfigFlags(serveFields, values, env) as ServeConfigInput;
    let fault: ReturnType<typeof parseServeFault>;
    try {
      fault = parseServeFault(env.EDGERL_SERVE_FAULT);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const serving = await serveModel({
      ...input,
      ...(fault ? { fault } : {}),
      log: (line) => stderr.write(`${line}\n`),
    }).catch((error: unknown) => {
      throw error instanceof ServeConfigError ? new UsageError(error.issues.join('; ')) : error;
    });
    const adapters = serving.engine.registry.list().map((entry) => entry.name);
    stdout.write(
      `edgerl serve-model: serving "${serving.baseName}"${adapters.length > 0 ? ` and adapters ${adapters.join(', ')}` : ''} on ${serving.url}/v1\n`,
    );
    await untilSignal();
    stdout.write('edgerl serve-model: shutting down\n');
    await serving.close();
    return 0;
  },
});
