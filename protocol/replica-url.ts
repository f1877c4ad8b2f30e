// An inference replica's name in the fleet: its OpenAI base URL up to /v1, without trailing slashes,
// so the trainer (which publishes to it) and the edge (which routes to it) spell one replica the same
// way in `publications.replica`. A fleet is written as a comma-separated list (an env variable) or
// as repeated flags; both end up here. Pure and Worker-safe.
import { redactSecrets } from './redact-secrets.ts';

/** The replica's stored name: the URL as given, trailing slashes removed. */
export function replicaName(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

/** Comma-separated URLs (blank items skipped), each as its replica name, first mention kept. */
export function parseReplicaList(text: string | readonly string[]): string[] {
  const items = (typeof text === 'string' ? [text] : text).flatMap((item) => item.split(','));
  return [...new Set(items.map(replicaName).filter((item) => item.length > 0))];
}

/** A problem with one replica URL, or undefined when it is an http(s) URL ending in /v1; the URL it
 *  quotes has any credentials masked (a replica behind basic auth). */
export function replicaUrlProblem(url: string): string | undefined {
  const shown = redactSecrets(url);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) {
    return `must be an http(s) URL such as http://127.0.0.1:8000/v1, got "${shown}"`;
  }
  if (!parsed.pathname.endsWith('/v1')) {
    return `must end in /v1 (the OpenAI base URL), got "${shown}"; try "${shown}/v1"`;
  }
  return undefined;
}
