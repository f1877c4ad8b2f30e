// Lets requests into the console: a signed session cookie (set by signing in with an API key), a
// bearer API key (scripts), or, for a console without keys, any request addressed to loopback.
// Pages redirect a signed-out browser to the sign-in form; the JSON API answers 401. State-changing
// requests pass `guardAction` too: same origin and the session's CSRF token, unless a bearer key
// (which a browser never attaches by itself) came with them.
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { GuessLimiter } from '../../protocol/guess-limiter.ts';
import type { KeyRing } from '../../protocol/key-ring.ts';
import type { ConsoleAccess, ConsoleEnv, ConsoleSession } from '../console-env.ts';
import { adminScopeNeeded, type ConsoleKeyCheck, checkConsoleKey } from './check-console-key.ts';
import { isLoopbackHost, sameOrigin } from './same-origin.ts';
import { csrfToken, equalText, verifySession } from './session-token.ts';

export const sessionCookie = 'edgerl_console';

export interface ConsoleAuthOptions {
  readonly access: ConsoleAccess;
  readonly base: string;
  /** The CSRF secret of a console without keys (random per process). */
  readonly loopbackSecret: string;
  readonly now: () => number;
  readonly limiter: GuessLimiter;
  readonly clientAddress: (c: Context) => string;
}

/** Paths anyone may load: the sign-in form and the static script and style files (no data in them). */
function isPublic(path: string, base: string): boolean {
  return path === `${base}/sign-in` || path.startsWith(`${base}/assets/`);
}

export function consoleAuth(options: ConsoleAuthOptions): MiddlewareHandler<ConsoleEnv> {
  const { access, base } = options;
  return async (c, next) => {
    if (access.kind === 'loopback') {
      if (!isLoopbackHost(new URL(c.req.url).host)) {
        return c.text('this console answers on localhost only; give it an API key to serve other hosts', 403);
      }
      c.set('session', { kind: 'loopback', csrf: await csrfToken(options.loopbackSecret, 'loopback') });
      return next();
    }
    if (isPublic(c.req.path, base)) return next();
    const session = await sessionOf(c, access.keys, options);
    if (session?.kind === 'blocked') return tooMany(c, session.retryAfterSeconds);
    if (session?.kind === 'not-admin')
      return c.json({ error: { code: 'forbidden', message: adminScopeNeeded } }, 403);
    if (!session) {
      if (c.req.method === 'GET' && !c.req.path.startsWith(`${base}/api/`)) {
        const url = new URL(c.req.url);
        return c.redirect(`${base}/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
      }
      c.header('WWW-Authenticate', 'Bearer realm="edgerl console"');
      return c.json(
        { error: { code: 'unauthorized', message: 'sign in, or send "Authorization: Bearer <API key>"' } },
        401,
      );
    }
    c.set('session', session);
    return next();
  };
}

function tooMany(c: Context<ConsoleEnv>, seconds: number) {
  c.header('Retry-After', String(seconds));
  return c.json(
    {
      error: {
        code: 'too-many-requests',
        message: `too many wrong API keys from this address; retry after ${seconds} s`,
      },
    },
    429,
  );
}

/** The session a request carries: a bearer key (checked through the limiter) or a signed cookie. */
async function sessionOf(
  c: Context<ConsoleEnv>,
  keys: KeyRing,
  options: ConsoleAuthOptions,
): Promise<ConsoleSession | Exclude<ConsoleKeyCheck, { kind: 'admin' | 'wrong' }> | undefined> {
  const bearer = /^Bearer +(\S+) *$/i.exec(c.req.header('authorization') ?? '');
  if (bearer) {
    const checked = checkConsoleKey({
      keys,
      limiter: options.limiter,
      client: options.clientAddress(c),
      route: `${c.req.method} ${c.req.path}`,
      presented: bearer[1] as string,
    });
    if (checked.kind === 'admin') return { kind: 'bearer' };
    return checked.kind === 'wrong' ? undefined : checked;
  }
  const cookie = getCookie(c, sessionCookie);
  if (!cookie) return undefined;
  // Only admin keys sign sessions: a key moved out of EDGE_API_KEYS ends its sessions.
  const signer = await verifySession(keys.keysWith('admin'), cookie, options.now() / 1000);
  return signer ? { kind: 'cookie', csrf: await csrfToken(signer, cookie) } : undefined;
}

/** Refuses (403) a state-changing request from another site or without the session's CSRF token. */
export function guardAction(): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const session = c.var.session;
    if (session.kind === 'bearer') return next();
    if (!sameOrigin(c.req.raw)) {
      return c.text("refused: this action must come from the console's own pages (cross-site request)", 403);
    }
    const form = await c.req.parseBody();
    const token = typeof form.csrf === 'string' ? form.csrf : '';
    if (!equalText(token, session.csrf)) {
      return c.text("refused: the form's CSRF token is missing or stale; reload the page and try again", 403);
    }
    return next();
  };
}

/** The CSRF token pages put in their forms; none for a bearer request (it needs none). */
export function csrfOf(session: ConsoleSession): string | undefined {
  return session.kind === 'bearer' ? undefined : session.csrf;
}
