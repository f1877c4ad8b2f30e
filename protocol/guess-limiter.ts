// Bounds API key guessing per client: after `maxFailures` wrong keys within `windowMs`, a client is
// blocked (429 with Retry-After) for `blockMs`, and every wrong key after a block doubles the next one
// up to `maxBlockMs`; while blocked even a right key is refused, or guessing would go on unseen. A
// right key clears the client. In memory per process (per isolate in a Worker: Cloudflare runs
// several, each counting on its own), Worker-safe (no timers: the clock is read per call), and
// bounded: at most `maxClients` clients are tracked, the least recently failing dropped first.
// Leaves out where the client address comes from (client-address.ts) and what the key was: neither
// the key nor its digest is ever logged.

export interface GuessLimits {
  /** Wrong keys a client may send within `windowMs` before it is blocked. */
  readonly maxFailures: number;
  /** The window the failures are counted in, in milliseconds. */
  readonly windowMs: number;
  /** The first block, in milliseconds; each wrong key after a block doubles it. */
  readonly blockMs: number;
  /** The longest block, in milliseconds. */
  readonly maxBlockMs: number;
  /** A client with no wrong key for this long starts afresh (its blocks forgotten), in milliseconds. */
  readonly forgetMs: number;
  /** Clients tracked at once; beyond it the least recently failing one is dropped. */
  readonly maxClients: number;
}

export const guessLimitDefaults: GuessLimits = {
  // Five: a person mistyping or pasting the wrong key of a few gets there within five tries (the
  // usual lock-out threshold of 3–10, NIST SP 800-63B 5.2.2 allows up to 100), while a guesser gets
  // five per minute instead of hundreds per second (issue 31's measured 289–600 a second).
  maxFailures: 5,
  windowMs: 60_000,
  blockMs: 60_000,
  // A quarter of an hour: a guesser that keeps trying gets one try per 15 minutes, about 100 a day,
  // against keys of 100+ random bits; a locked-out person waits no longer than a coffee break.
  maxBlockMs: 15 * 60_000,
  // Longer than the longest block, so waiting out one block does not reset the doubling.
  forgetMs: 60 * 60_000,
  // 10,000 clients at ~100 bytes each is about a megabyte: fine in a 128 MB Worker isolate.
  maxClients: 10_000,
};

export type GuessVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

interface ClientState {
  /** When the current counting window began. */
  windowStart: number;
  /** Wrong keys in the current window (before the first block). */
  failures: number;
  /** Wrong keys since the last success or since forgotten: what the log line reports. */
  total: number;
  /** Blocks so far; the next is blockMs * 2^blocks, capped. */
  blocks: number;
  blockedUntil: number;
  lastFailure: number;
  /** When a line was last logged for this client (undefined: never). */
  loggedAt: number | undefined;
}

export interface GuessLimiterOptions {
  readonly limits?: Partial<GuessLimits>;
  /** The clock in milliseconds (tests inject one); default Date.now. */
  readonly now?: () => number;
  /** Where failure lines go: one per client per window, plus one when a block starts. */
  readonly log?: (line: string) => void;
}

export class GuessLimiter {
  readonly limits: GuessLimits;
  readonly #now: () => number;
  readonly #log: (line: string) => void;
  /** Insertion order is recency: a failing client is moved to the end, the first one is the oldest. */
  readonly #clients = new Map<string, ClientState>();

  constructor(options: GuessLimiterOptions = {}) {
    this.limits = { ...guessLimitDefaults, ...options.limits };
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? ((line) => console.warn(line));
  }

  /** Clients tracked now (bounded by maxClients). */
  get trackedClients(): number {
    return this.#clients.size;
  }

  /** Whether `client` may present a key now; ask before checking the key. */
  check(client: string): GuessVerdict {
    const state = this.#clients.get(clientKey(client));
    const now = this.#now();
    if (!state || now >= state.blockedUntil) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((state.blockedUntil - now) / 1000)) };
  }

  /** Counts a wrong key from `client` on `route` (a path; never the key). */
  fail(client: string, route: string): void {
    const id = clientKey(client);
    const now = this.#now();
    let state = this.#clients.get(id);
    if (state && now - state.lastFailure >= this.limits.forgetMs) state = undefined;
    state ??= {
      windowStart: now,
      failures: 0,
      total: 0,
      blocks: 0,
      blockedUntil: 0,
      lastFailure: now,
      loggedAt: undefined,
    };
    state.total += 1;
    state.lastFailure = now;
    let blockedMs = 0;
    if (state.blocks === 0) {
      if (now - state.windowStart >= this.limits.windowMs) {
        state.windowStart = now;
        state.failures = 0;
      }
      state.failures += 1;
      if (state.failures >= this.limits.maxFailures) blockedMs = this.limits.blockMs;
    } else {
      // A wrong key after a block: blocked again at once, twice as long (RFC 6585's 429 leaves the
      // policy to the server; exponential backoff as in RFC 8555 6.6 and every cloud API's guidance).
      blockedMs = Math.min(this.limits.maxBlockMs, this.limits.blockMs * 2 ** state.blocks);
    }
    if (blockedMs > 0) {
      state.blocks += 1;
      state.blockedUntil = now + blockedMs;
    }
    if (blockedMs > 0 || state.loggedAt === undefined || now - state.loggedAt >= this.limits.windowMs) {
      state.loggedAt = now;
      const blocked = blockedMs > 0 ? `; blocked for ${Math.ceil(blockedMs / 1000)} s` : '';
      this.#log(
        `edgerl auth-failure: client ${id}, route ${safeText(route)}, ${state.total} wrong key(s) since the last success${blocked}`,
      );
    }
    this.#clients.delete(id);
    this.#clients.set(id, state);
    while (this.#clients.size > this.limits.maxClients) {
      const oldest = this.#clients.keys().next();
      if (oldest.done) break;
      this.#clients.delete(oldest.value);
    }
  }

  /** A right key from `client`: its failures and blocks are forgotten. */
  succeed(client: string): void {
    this.#clients.delete(clientKey(client));
  }
}

/** A client address as a bounded, printable map key (a forwarded header is the sender's text). */
function clientKey(client: string): string {
  return safeText(client).slice(0, 64) || 'unknown';
}

function safeText(text: string): string {
  return text.replace(/[^\w .:%/[\]-]/g, '?').slice(0, 200);
}
