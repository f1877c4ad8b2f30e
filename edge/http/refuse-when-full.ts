// Runs a route's work and turns an admission refusal (rollouts/admit-episodes.ts) into the HTTP
// answer: 429 `backlog-full` with Retry-After, the seconds until the backlog should have room.
import type { Context } from 'hono';
import { BacklogFull } from '../rollouts/admit-episodes.ts';
import { ApiError } from './api-error.ts';

export async function refuseWhenFull<T>(c: Context, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof BacklogFull)) throw error;
    c.header('Retry-After', String(error.retryAfterSeconds));
    throw new ApiError('backlog-full', error.message, { cause: error });
  }
}
