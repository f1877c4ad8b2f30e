// GET /v1/models: the base model and every loaded adapter, as vLLM's ModelCard lists them
// (adapters name the base as `parent` and their directory as `root`; owned_by is ours).
import { Hono } from 'hono';
import type { ServeContext } from './serve-context.ts';

export function modelsRoute(serve: ServeContext): Hono {
  return new Hono().get('/v1/models', (c) => {
    const card = (id: string, created: number, root: string, parent: string | null) => ({
      id,
      object: 'model',
      created,
      owned_by: 'edgerl',
      root,
      parent,
      max_model_len: serve.maxModelLen,
    });
    return c.json({
      object: 'list',
      data: [
        card(serve.baseName, serve.created, serve.basePath, null),
        ...serve.engine.registry
          .list()
          .map((entry) => card(entry.name, entry.created, entry.path, serve.baseName)),
      ],
    });
  });
}
