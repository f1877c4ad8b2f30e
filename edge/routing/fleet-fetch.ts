// The recording proxy's call over the inference fleet: POST /chat/completions to a replica that holds
// the request's model (replica-router.ts), passing over a replica that refuses the connection or
// answers 404 for the model, as the episode loop's fleet-policy-client.ts does. No holder is a 503
// (`unavailable`): nothing goes to a replica that has not confirmed the version.
import { chatCompletionsUrl } from '../../protocol/openai/chat-completions-url.ts';
import { ApiError } from '../http/api-error.ts';
import type { ReplicaPicker } from './replica-router.ts';

/** A fleet's answer and the replica that gave it (recorded on the turn, as the episode loop's are). */
export interface FleetAnswer {
  readonly response: Response;
  readonly replica: string;
}

/** Sends a chat completions request for `model` to the fleet; resolves with the first usable answer. */
export type FleetFetch = (model: string, init: RequestInit) => Promise<FleetAnswer>;

export function fleetFetch(picker: ReplicaPicker, doFetch: typeof fetch = fetch): FleetFetch {
  return async (model, init) => {
    const choice = await picker.choose(model);
    if (choice.replicas.length === 0) {
      throw new ApiError(
        'unavailable',
        `no replica of the fleet holds ${model} (no ready row in publications); run edgerl fleet catch-up`,
      );
    }
    let last: unknown;
    for (const [index, replica] of choice.replicas.entries()) {
      const isLast = index === choice.replicas.length - 1;
      let response: Response;
      try {
        response = await doFetch(chatCompletionsUrl(replica), init);
      } catch (error) {
        if (init.signal?.aborted || isLast) throw error;
        picker.unreachable(replica);
        last = error;
        continue;
      }
      if (response.status !== 404) return { response, replica };
      // A 404 from a holder: it lost the adapter (a restart), so it is quarantined even when it is the
      // last to try, as the episode loop's client does. Its body is read here, so pass it on whole.
      const text = await response.text();
      await picker.lost(choice, replica, `404 for ${model}: ${text.slice(0, 300)}`);
      const answer = new Response(text, { status: response.status, headers: response.headers });
      if (isLast) return { response: answer, replica };
      last = answer;
    }
    throw last;
  };
}
