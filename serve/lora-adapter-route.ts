// POST /v1/load_lora_adapter {lora_name, lora_path, load_inplace?} and POST /v1/unload_lora_adapter
// {lora_name}, with vLLM's answers (vllm/entrypoints/openai/serving_models.py): 200 and a plain
// "Success: ..." text; 400 for a missing field, a name already loaded (unless load_inplace) or an
// adapter that does not fit; 404 for a directory that does not exist or an unknown name to unload.
// Loads run between decode steps and a failed load leaves every loaded adapter serving.
import { Hono } from 'hono';
import { z } from 'zod';
import { readJsonBody, type ServeContext } from './serve-context.ts';
import { ServeError } from './serve-error.ts';

const loadSchema = z.object({
  lora_name: z.string().nullish(),
  lora_path: z.string().nullish(),
  load_inplace: z.boolean().nullish(),
});
const unloadSchema = z.object({ lora_name: z.string().nullish() });

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ServeError(
      'bad-request',
      `${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
      issue?.path.join('.') || null,
    );
  }
  return parsed.data;
}

export function loraAdapterRoute(serve: ServeContext): Hono {
  return new Hono()
    .post('/v1/load_lora_adapter', async (c) => {
      const body = parse(loadSchema, await readJsonBody(c));
      if (!body.lora_name || !body.lora_path) {
        throw new ServeError(
          'bad-request',
          "Both 'lora_name' and 'lora_path' must be provided.",
          body.lora_name ? 'lora_path' : 'lora_name',
        );
      }
      await serve.engine.loadAdapter(body.lora_name, body.lora_path, { inplace: body.load_inplace ?? false });
      return c.text(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
    })
    .post('/v1/unload_lora_adapter', async (c) => {
      const body = parse(unloadSchema, await readJsonBody(c));
      if (!body.lora_name) throw new ServeError('bad-request', "'lora_name' must be provided.", 'lora_name');
      await serve.engine.unloadAdapter(body.lora_name);
      return c.text(`Success: LoRA adapter '${body.lora_name}' removed successfully.`);
    });
}
