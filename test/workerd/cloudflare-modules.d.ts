// The parts of workerd's test modules these tests use, declared locally so the project type-checks
// without the Workers type library (see edge/runtime/worker-types.ts). Shapes follow
// @cloudflare/vitest-plugin's types/cloudflare-test.d.ts.
declare module 'cloudflare:test' {
  import type {
    ExecutionContextLike,
    MessageBatchLike,
    ScheduledControllerLike,
  } from '../../edge/runtime/worker-types.ts';

  export const SELF: { fetch(input: string | Request, init?: RequestInit): Promise<Response> };
  export const env: Record<string, unknown>;
  export function createExecutionContext(): ExecutionContextLike;
  export function waitOnExecutionContext(context: ExecutionContextLike): Promise<void>;
  export function createScheduledController(options?: {
    scheduledTime?: Date | number;
    cron?: string;
  }): ScheduledControllerLike;
  export function createMessageBatch<Body = unknown>(
    queueName: string,
    messages: { id: string; timestamp: Date; attempts: number; body: Body }[],
  ): MessageBatchLike<Body>;
  export function getQueueResult(
    batch: MessageBatchLike<unknown>,
    context: ExecutionContextLike,
  ): Promise<{
    outcome: string;
    ackAll: boolean;
    retryBatch: { retry: boolean; delaySeconds?: number };
    explicitAcks: string[];
    retryMessages: { msgId: string; delaySeconds?: number }[];
  }>;
}
