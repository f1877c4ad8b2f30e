// A TrajectorySink that keeps one trajectory in memory: for tests, dry runs and the demo. It checks
// what the store will check (each turn against the protocol schema and the order rules of
// protocol/validate-turns.ts, idempotent appends by index, nothing after finish), and can be told to fail, to exercise the loop's store-failure paths.
import { formatIssues } from '../../protocol/format-issues.ts';
import { type Turn, type TurnInput, turnInputSchema } from '../../protocol/turn.ts';
import { sequenceIssues } from '../../protocol/validate-turns.ts';
import type { TrajectoryEnd, TrajectorySink } from './trajectory-sink.ts';

export interface InMemorySinkFaults {
  /** Return an error to make this append attempt fail (attempts counted per index, from 1). */
  appendTurn?(turn: TurnInput, attempt: number): Error | undefined;
  finish?(end: TrajectoryEnd, attempt: number): Error | undefined;
}

export class InMemoryTrajectorySink implements TrajectorySink {
  readonly trajectoryId: string;
  readonly #turns = new Map<number, Turn>();
  readonly #appendAttempts = new Map<number, number>();
  #finishAttempts = 0;
  #end: TrajectoryEnd | undefined;
  readonly #faults: InMemorySinkFaults;

  constructor(trajectoryId: string = crypto.randomUUID(), faults: InMemorySinkFaults = {}) {
    this.trajectoryId = trajectoryId;
    this.#faults = faults;
  }

  async appendTurn(input: TurnInput): Promise<void> {
    await this.appendTurns([input]);
  }

  /** All or none, like the store: every turn is checked (and its fault asked) before any is kept. */
  async appendTurns(inputs: readonly TurnInput[]): Promise<void> {
    for (const input of inputs) {
      const attempt = (this.#appendAttempts.get(input.index) ?? 0) + 1;
      this.#appendAttempts.set(input.index, attempt);
    }
    for (const input of inputs) {
      const fault = this.#faults.appendTurn?.(input, this.#appendAttempts.get(input.index) ?? 1);
      if (fault) throw fault;
    }
    const kept = new Map(this.#turns);
    for (const input of inputs) this.#check(input, kept);
    // The order rules of every writer (the store's sink checks them too: store-trajectory-sink.ts).
    const disorder = sequenceIssues([...kept.values()]).issues[0];
    if (disorder) {
      const [index, field] = disorder.path;
      throw new Error(`invalid turn ${index}: ${field}: ${disorder.message}`);
    }
    for (const [index, turn] of kept) this.#turns.set(index, turn);
  }

  /** Adds `input` to `turns` (a repeat is a no-op), or throws why not. */
  #check(input: TurnInput, turns: Map<number, Turn>): void {
    if (this.#end)
      throw new Error(`trajectory ${this.trajectoryId} is finished; turn ${input.index} refused`);
    if (input.trajectoryId !== this.trajectoryId) {
      throw new Error(`turn for trajectory ${input.trajectoryId} sent to ${this.trajectoryId}`);
    }
    const parsed = turnInputSchema.safeParse(input);
    if (!parsed.success) throw new Error(`invalid turn ${input.index}: ${formatIssues(parsed.error)}`);
    const existing = turns.get(input.index);
    if (existing) {
      if (JSON.stringify(existing) !== JSON.stringify(parsed.data)) {
        throw new Error(`turn ${input.index} already written with different content`);
      }
      return;
    }
    if (input.index !== turns.size) {
      throw new Error(`turn ${input.index} out of order: expected index ${turns.size}`);
    }
    turns.set(input.index, parsed.data);
  }

  async finish(end: TrajectoryEnd, turns: readonly TurnInput[] = []): Promise<void> {
    // The store writes the step and the end in one statement; here the step is appended first, and a
    // retry after a finish fault repeats it (a no-op), as the store's fallback does.
    if (turns.length > 0) await this.appendTurns(turns);
    this.#finishAttempts += 1;
    const fault = this.#faults.finish?.(end, this.#finishAttempts);
    if (fault) throw fault;
    if (this.#end) throw new Error(`trajectory ${this.trajectoryId} is already finished`);
    this.#end = end;
  }

  /** Turns in index order. */
  get turns(): readonly Turn[] {
    return [...this.#turns.values()];
  }

  get end(): TrajectoryEnd | undefined {
    return this.#end;
  }
}
