// POST /v1/completions: prompts as text (tokenized with the model's tokenizer, special tokens added
// unless `add_special_tokens: false`) or as token ids used verbatim; n choices per prompt, all
// decoded together.
import { Hono } from 'hono';
import { parseCompletionRequest } from './completion-request.ts';
import { type CompletionContext, CompletionChunks, completionBody } from './completion-response.ts';
import { promptLogprobs } from './prompt-logprobs.ts';
import { runChoices } from './run-choices.ts';
import { resolveMaxTokens } from './sampling-fields.ts';
import { readJsonBody, requestId, type ServeContext, unixSeconds } from './serve-context.ts';
import { ServeError } from './serve-error.ts';
import { sseResponse } from './sse.ts';

export function completionsRoute(serve: ServeContext): Hono {
  return new Hono().post('/v1/completions', async (c) => {
    const request = parseCompletionRequest(await readJsonBody(c), serve.vocabSize);
    serve.engine.registry.resolve(request.model);
    const several = request.prompts.length > 1;
    const promptIds = request.prompts.map((prompt, index) => {
      const field = several ? `prompt.${index}` : 'prompt';
      if ('text' in prompt) {
        const ids = serve.tokenizer.encode(prompt.text, { addSpecialTokens: request.addSpecialTokens });
        if (ids.length === 0) throw new ServeError('bad-request', `${field} encodes to no tokens`, field);
        return ids;
      }
      const outside = prompt.ids.findIndex((id) => id >= serve.vocabSize);
      if (outside >= 0) {
        throw new ServeError(
          'bad-request',
          `${field}.${outside}: token id ${prompt.ids[outside]} is outside the vocabulary [0, ${serve.vocabSize})`,
          field,
        );
      }
      return [...prompt.ids];
    });
    const prompts = promptIds.map((ids, index) => ({
      promptIds: ids,
      maxTokens: resolveMaxTokens(request.maxTokens, ids.length, serve.maxModelLen, {
        prompt: several ? `prompt.${index}` : 'prompt',
        maxTokens: 'max_tokens',
      }),
    }));
    const { settings } = request;
    // Before the choices run: one forward pass per prompt, between decode steps (engine.ts).
    const top = request.promptLogprobs;
    const scored =
      top === undefined
        ? undefined
        : await Promise.all(
            promptIds.map(async (ids) =>
              promptLogprobs(
                await serve.engine.promptLogits(request.model, ids),
                ids,
                serve.vocabSize,
                top,
                (id) => serve.tokenizer.decodeToken(id),
              ),
            ),
          );
    const { choices, updates } = runChoices(serve.engine, serve.tokenizer, serve.vocabSize, {
      model: request.model,
      prompts,
      settings,
      signal: c.req.raw.signal,
    });
    const context: CompletionContext = {
      id: requestId('cmpl'),
      created: unixSeconds(),
      model: request.model ?? serve.baseName,
      promptIds,
      settings,
      naming: { tokenizer: serve.tokenizer, tokensAsTokenIds: settings.tokensAsTokenIds },
      ...(scored ? { promptLogprobs: scored } : {}),
    };
    if (!settings.stream) {
      for await (const _ of updates) {
        // Collected in the outputs; answered once all choices finish.
      }
      return c.json(completionBody(context, choices));
    }
    const chunks = new CompletionChunks(context, choices);
    return sseResponse(c, async (send) => {
      for await (const update of updates) {
        const chunk = chunks.next(update);
        if (chunk) await send(chunk);
      }
      if (settings.includeUsage) await send(chunks.usage());
    });
  });
}
