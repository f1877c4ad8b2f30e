// The console on its own (`edgerl console`): mounted at its base path, the root redirecting there.
// The edge mounts createConsoleApp itself, beside its API.
import { Hono } from 'hono';
import { createConsoleApp, defaultConsoleBase } from './console-app.ts';
import type { ConsoleDeps } from './console-env.ts';

export function createConsoleServer(deps: ConsoleDeps) {
  const base = deps.basePath ?? defaultConsoleBase;
  return new Hono()
    .get('/', (c) => c.redirect(`${base}/`, 302))
    .get(`${base}/`, (c) => c.redirect(base, 302))
    .route(base, createConsoleApp({ ...deps, basePath: base }));
}
