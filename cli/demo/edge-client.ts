// The demo's HTTP client for the edge's rollout API: start a group (POST /v1/rollouts) and wait for
// groups to end (GET /v1/groups/:id). The demo goes through the API, as a real client would, rather
// than calling the store. Leaves out retries: the edge is in-process and local.
import type { TaskSplit } from '../../protocol/statuses.ts';

export interface StartGroupRequest {
  readonly env: string;
  readonly groupSize: number;
  readonly split: TaskSplit;
  readonly taskSeed: number;
  readonly policy?: string;
  readonly experiment?: string;
  readonly stickinessKey?: string;
  readonly settings: { readonly temperature: number; readonly maxTokens: number; readonly seed: number };
}

export interface GroupView {
  readonly group: { readonly id: string; readonly status: string; readonly size: number };
  readonly progress: { readonly size: number; readonly ended: number };
  readonly trajectories: readonly {
    readonly status: string;
    readonly verifierReward: number | null;
    readonly experimentArmId: string | null;
  }[];
}

export class EdgeClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string,
  ) {}

  async startGroup(
    request: StartGroupRequest,
  ): Promise<{ groupId: string; model: string; arm: string | null }> {
    return (await this.#call('/v1/rollouts', request)) as {
      groupId: string;
      model: string;
      arm: string | null;
    };
  }

  async group(groupId: string): Promise<GroupView> {
    return (await this.#call(`/v1/groups/${groupId}`)) as GroupView;
  }

  /** Polls until every group has left `running`; `onProgress` gets episodes ended so far. */
  async waitForGroups(
    groupIds: readonly string[],
    onProgress: (ended: number) => void,
    intervalMs = 250,
  ): Promise<GroupView[]> {
    const done = new Map<string, GroupView>();
    const ended = new Map<string, number>();
    for (;;) {
      for (const id of groupIds) {
        if (done.has(id)) continue;
        const view = await this.group(id);
        ended.set(id, view.progress.ended);
        if (view.group.status !== 'running') done.set(id, view);
      }
      onProgress([...ended.values()].reduce((a, b) => a + b, 0));
      if (done.size === groupIds.length) return groupIds.map((id) => done.get(id) as GroupView);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }

  async #call(path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
    if (!response.ok)
      throw new Error(`edge ${path}: HTTP ${response.status}: ${json.error?.message ?? 'no details'}`);
    return json;
  }
}
