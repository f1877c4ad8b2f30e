// A deadline for one outbound call: a signal that aborts with a `TimeoutError` after `ms`, or with the
// parent's reason when the parent (an episode, a request) aborts first; `clear()` ends it once the call
// has settled.
//
// Why not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: Node's timeout timer holds its signal
// only weakly, and `any` holds its sources weakly too, so once the caller drops the timeout signal a
// collection can take it and the timer fires on nothing: the call then waits for as long as the server
// does (nodejs/node#57736; seen here as a hung policy call answered after 4 s under a 1.5 s timeout).
// Here the timer's own callback holds the controller, so the deadline lives until it fires or is cleared,
// and clearing also unhooks the parent, which `any` never does (a long-lived episode signal would
// otherwise gather one listener per call, nodejs/node#48419).

export interface Deadline {
  readonly signal: AbortSignal;
  /** True once the time ran out (not when the parent aborted). */
  readonly timedOut: boolean;
  /** Stops the timer and unhooks the parent; the signal stays as it is. Safe to call twice. */
  clear(): void;
}

export function startDeadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onParentAbort = () => controller.abort(parent?.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    // The same reason AbortSignal.timeout gives, so callers that check `reason.name` read it alike.
    controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError'));
  }, ms);
  // Like AbortSignal.timeout, a pending deadline does not keep a Node process alive on its own (the
  // call it guards does). Workers' timers are numbers without unref.
  if (typeof timer === 'object' && timer !== null && 'unref' in timer) timer.unref();
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
