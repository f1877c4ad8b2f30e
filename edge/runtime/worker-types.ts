// The few Workers runtime shapes the Worker entry uses, declared here rather than pulling the whole
// Workers type library into a project that type-checks Node code too. They match
// @cloudflare/workers-types' Queue, Message, MessageBatch, ScheduledController and ExecutionContext
// for what is used.

export interface QueueLike<Body> {
  send(body: Body): Promise<unknown>;
  sendBatch(messages: Iterable<{ body: Body }>): Promise<unknown>;
}

export interface QueueMessageLike<Body> {
  readonly id: string;
  readonly body: Body;
  /** Deliveries so far, this one included (1 on the first). */
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

export interface MessageBatchLike<Body> {
  readonly queue: string;
  readonly messages: readonly QueueMessageLike<Body>[];
}

export interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
  readonly props: unknown;
}

export interface ScheduledControllerLike {
  /** When the trigger was due, in milliseconds since the epoch. */
  readonly scheduledTime: number;
  /** The cron expression that fired. */
  readonly cron: string;
  noRetry(): void;
}
