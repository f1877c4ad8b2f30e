// Signing a browser in and out. Sign-in checks the key (constant-time), sets an HttpOnly,
// SameSite=Strict cookie (Secure over https) holding a signature of the key with its expiry, and
// returns the browser to the page it asked for (a path under the console only: no open redirect).
import { Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { guardAction, sessionCookie } from '../auth/console-auth.ts';
import { sameOrigin } from '../auth/same-origin.ts';
import type { Context } from 'hono';
import type { GuessLimiter } from '../../protocol/guess-limiter.ts';
import { adminScopeNeeded, checkConsoleKey } from '../auth/check-console-key.ts';
import { issueSession, sessionSeconds } from '../auth/session-token.ts';
import type { ConsoleAccess, ConsoleEnv } from '../console-env.ts';
import type { ConsoleLinks } from '../links.ts';
import { signInPage } from '../pages/sign-in-page.ts';

export interface SignInOptions {
  readonly access: ConsoleAccess;
  readonly base: string;
  readonly links: ConsoleLinks;
  readonly now: () => number;
  readonly limiter: GuessLimiter;
  readonly clientAddress: (c: Context) => string;
}

/** `next` when it is a path of the console's own, else the console's home. */
export function safeNext(next: unknown, base: string): string {
  const home = base;
  if (typeof next !== 'string' || next.length > 2000) return home;
  if (!(next === base || next.startsWith(`${base}/`) || next.startsWith(`${base}?`))) return home;
  const control = [...next].some((character) => (character.codePointAt(0) ?? 0) < 0x20);
  if (next.includes('//') || next.includes('\\') || control) return home;
  return next;
}

function isHttps(request: Request): boolean {
  return new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
}

export function signInRoutes(options: SignInOptions) {
  const { access, base, links } = options;
  const action = `${base}/sign-in`;
  const app = new Hono<ConsoleEnv>();
  app.get('/sign-in', (c) => {
    if (access.kind === 'loopback') return c.redirect(base, 303);
    return c.html(signInPage(links, { action, next: safeNext(c.req.query('next'), base) }).value);
  });
  app.post('/sign-in', async (c) => {
    if (access.kind === 'loopback') return c.redirect(base, 303);
    if (!sameOrigin(c.req.raw)) return c.text("refused: sign in from the console's own page", 403);
    const form = await c.req.parseBody();
    const next = safeNext(form.next, base);
    const checked = checkConsoleKey({
      keys: access.keys,
      limiter: options.limiter,
      client: options.clientAddress(c),
      route: `POST ${action}`,
      presented: typeof form.key === 'string' ? form.key : '',
    });
    const refuse = (error: string, status: 401 | 403 | 429) =>
      c.html(signInPage(links, { action, next, error }).value, status);
    if (checked.kind === 'blocked') {
      c.header('Retry-After', String(checked.retryAfterSeconds));
      return refuse(
        `Too many wrong keys from this address: try again in ${checked.retryAfterSeconds} seconds.`,
        429,
      );
    }
    if (checked.kind === 'wrong') return refuse("That key is not one of the edge's API keys.", 401);
    if (checked.kind === 'not-admin') return refuse(`Refused: ${adminScopeNeeded}.`, 403);
    setCookie(c, sessionCookie, await issueSession(checked.key, options.now() / 1000), {
      path: base,
      httpOnly: true,
      sameSite: 'Strict',
      secure: isHttps(c.req.raw),
      maxAge: sessionSeconds,
    });
    return c.redirect(next, 303);
  });
  app.post('/sign-out', guardAction(), (c) => {
    deleteCookie(c, sessionCookie, { path: base, secure: isHttps(c.req.raw) });
    return c.redirect(access.kind === 'keys' ? action : base, 303);
  });
  return app;
}
