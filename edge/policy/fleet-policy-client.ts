// A PolicyClient over the inference fleet: each request goes to a replica that holds its model
// (edge/routing/replica-router.ts), through that replica's own OpenAI-compatible client. A replica
// that cannot be reached, or answers 404 for the model (it restarted and lost the adapter), is
// passed over for the next holder; any other failure is the request's (the episode loop retries the
// retryable ones). No replica holding the model is a 503: nothing is sent to a replica that has not
// confirmed it. The replica that answered is on the response, for the turn's metadata.
import type { ReplicaPicker } from '../routing/replica-router.ts';
import { OpenAIPolicyClient, type OpenAIPolicyClientOptions } from './openai-policy-client.ts';
import type { PolicyClient, PolicyRequest, PolicyResponse } from './policy-client.ts';
import { PolicyError } from './policy-error.ts';

export interface FleetPolicyClientOptions extends Omit<OpenAIPolicyClientOptions, 'baseUrl'> {
  readonly picker: ReplicaPicker;
}

export class FleetPolicyClient implements PolicyClient {
  readonly #picker: ReplicaPicker;
  readonly #options: Omit<OpenAIPolicyClientOptions, 'baseUrl'>;
  readonly #clients = new Map<string, PolicyClient>();

  constructor({ picker, ...options }: FleetPolicyClientOptions) {
    this.#picker = picker;
    this.#options = options;
  }

  async complete(request: PolicyRequest): Promise<PolicyResponse> {
    const choice = await this.#picker.choose(request.model);
    if (choice.replicas.length === 0) {
      // 503: the service cannot answer for this model now; a catch-up may fix it, so it is retryable.
      throw new PolicyError(
        'http',
        `no replica of the fleet holds ${request.model} (no ready row in publications); run edgerl fleet catch-up`,
        { status: 503 },
      );
    }
    let last: unknown;
    for (const replica of choice.replicas) {
      try {
        const response = await this.#client(replica).complete(request);
        return { ...response, replica };
      } catch (error) {
        if (!(error instanceof PolicyError)) throw error;
        if (error.code === 'network') {
          this.#picker.unreachable(replica);
        } else if (error.code === 'http' && error.status === 404) {
          await this.#picker.lost(choice, replica, `404 for ${request.model}: ${error.message}`);
        } else {
          throw error;
        }
        last = error;
      }
    }
    throw last;
  }

  #client(replica: string): PolicyClient {
    let client = this.#clients.get(replica);
    if (!client) {
      client = new OpenAIPolicyClient({ ...this.#options, baseUrl: replica });
      this.#clients.set(replica, client);
    }
    return client;
  }
}
