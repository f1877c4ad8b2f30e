// The console as a Hono sub-app, mounted by the edge at /console (behind its API keys) and served by
// `edgerl console`: server-rendered pages, a JSON API under /api for charts and live updates, and its
// static files. Every response carries a strict Content-Security-Policy (scripts from the console
// only, no inline script), so even a stored string that slipped past escaping could not run.
import { Hono, type MiddlewareHandler } from 'hono';
import { consoleAuth } from './auth/console-auth.ts';
import { randomSecret } from './auth/session-token.ts';
import { GuessLimiter } from '../protocol/guess-limiter.ts';
import type { ConsoleDeps, ConsoleEnv, ConsoleStores } from './console-env.ts';
import { errorOutcome } from './console-error.ts';
import { serverLinks } from './links.ts';
import { errorPage } from './pages/error-page.ts';
import { actionRoutes } from './routes/action-routes.ts';
import { apiRoutes } from './routes/api-routes.ts';
import { assetRoutes } from './routes/asset-routes.ts';
import { page, pageContext, pageRoutes } from './routes/page-routes.ts';
import { signInRoutes } from './routes/sign-in-routes.ts';

export const defaultConsoleBase = '/console';
/** Once a second: a turn takes longer than that to sample, and the poll is one indexed query. */
export const defaultPollMs = 1000;

const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

function securityHeaders(): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    await next();
    c.header('content-security-policy', contentSecurityPolicy);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'same-origin');
    c.header('x-frame-options', 'DENY');
  };
}

/** One store per request (a pool on Workers, the shared store in Node), released when the answer is ready. */
function withStore(stores: ConsoleStores): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const handle = await stores.open();
    c.set('store', handle.store);
    try {
      await next();
    } finally {
      await handle.release();
    }
  };
}

export function createConsoleApp(deps: ConsoleDeps) {
  const base = deps.basePath ?? defaultConsoleBase;
  const links = serverLinks(base);
  const now = deps.now ?? Date.now;
  const logError = deps.logError ?? ((error: unknown) => console.error('edgerl console:', error));
  const signOut = deps.access.kind === 'keys';
  const app = new Hono<ConsoleEnv>();
  app.use(securityHeaders());
  const limiter = deps.limiter ?? new GuessLimiter();
  const clientAddress = deps.clientAddress ?? (() => 'unknown');
  const guard = { limiter, clientAddress, now };
  app.use(consoleAuth({ access: deps.access, base, loopbackSecret: randomSecret(), ...guard }));
  app.route('/assets', assetRoutes());
  app.route('/', signInRoutes({ access: deps.access, base, links, ...guard }));
  app.use(withStore(deps.stores));
  app.route('/api', apiRoutes());
  app.route('/', actionRoutes({ links, signOut, base, ...(deps.fleet ? { fleet: deps.fleet } : {}) }));
  app.route(
    '/',
    pageRoutes({
      links,
      signOut,
      pollMs: deps.pollMs ?? defaultPollMs,
      ...(deps.tokenText ? { tokenText: deps.tokenText } : {}),
    }),
  );
  // Last, so it answers only what nothing above did; a catch-all route, not notFound, because a parent
  // app that mounts this one keeps its own notFound.
  app.all('*', (c) => {
    if (c.req.path.startsWith(`${base}/api/`)) {
      return c.json({ error: { code: 'not-found', message: `no console API at ${c.req.path}` } }, 404);
    }
    return page(
      c,
      errorPage(pageContext(c, { links, signOut }), 404, `No console page at ${c.req.path}.`),
      404,
    );
  });
  app.onError((error, c) => {
    const outcome = errorOutcome(error);
    if (outcome.log) logError(error);
    if (c.req.path.startsWith(`${base}/api/`)) {
      return c.json({ error: { code: outcome.code, message: outcome.message } }, outcome.status);
    }
    if (!c.var.session) return c.text(outcome.message, outcome.status);
    return page(
      c,
      errorPage(pageContext(c, { links, signOut }), outcome.status, outcome.message),
      outcome.status === 503 ? 500 : outcome.status,
    );
  });
  return app;
}

export type ConsoleApp = ReturnType<typeof createConsoleApp>;
