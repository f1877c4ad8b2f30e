// Which state of the trajectory a proxied call writes after, and which of its messages are new: the
// edge's cached head when the call holds the trajectory's key and its history continues that head
// (no store read), otherwise the head read now and checked (writer, key, status, history). Leaves out
// the upstream call and the append (record-chat-completion.ts).
import { isStoreError } from '../../db/errors.ts';
import { accessRefusal, type Store } from '../../db/store.ts';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { ApiError, invalidField } from '../http/api-error.ts';
import { type Route, recordedRoute } from '../routing/route.ts';
import { checkHistory, requestDigest } from './check-history.ts';
import type { NewMessages } from './new-messages.ts';
import type { TrajectoryHeads } from './trajectory-heads.ts';

/** What a call assumes of the trajectory: a cached head, or the one just read. */
export interface HeadView {
  readonly turnCount: number;
  /** Null when the last stored turn has no digest (stored before the column): compared turn by turn. */
  readonly historyDigest: string | null;
  readonly tools: readonly ToolSpec[] | null;
  readonly route: Route | undefined;
  /** The trajectory's key digest; null for a keyless one. */
  readonly keyDigest: string | null;
}

export async function headForCall(
  store: Store,
  heads: TrajectoryHeads | undefined,
  trajectoryId: string,
  messages: readonly ChatMessage[],
  keyDigest: string | undefined,
): Promise<{ view: HeadView; fresh: Extract<NewMessages, { ok: true }> }> {
  const known = heads?.get(trajectoryId);
  if (known && !keyFits(known, keyDigest)) {
    // Not the trajectory's key: the read refuses it (a head is only ever its writer's: a client's).
    return readAndCheck(store, trajectoryId, messages, keyDigest);
  }
  if (known && continues(known, messages)) {
    return {
      view: known,
      fresh: { ok: true, firstIndex: known.turnCount, messages: messages.slice(known.turnCount) },
    };
  }
  // No head, or a request it does not vouch for: the answer is the stored state's, read now.
  heads?.delete(trajectoryId);
  return readAndCheck(store, trajectoryId, messages, keyDigest);
}

/** True when the call may write the trajectory the head is of: it is keyless, or the call gave its key. */
function keyFits(head: HeadView, keyDigest: string | undefined): boolean {
  return head.keyDigest === null || head.keyDigest === keyDigest;
}

/** True when the request's first messages are the head's turns (their digest is the head's). */
function continues(head: HeadView, messages: readonly ChatMessage[]): boolean {
  return (
    head.historyDigest !== null &&
    messages.length >= head.turnCount &&
    requestDigest(messages, head.turnCount) === head.historyDigest
  );
}

/**
 * The trajectory's head read from the store, and the call checked against it before any upstream call:
 * another writer's trajectory (409 `trajectory-owned`), a missing or wrong key (403 `trajectory-key`),
 * a closed trajectory or a history that differs (409). The append statement checks the writer again.
 */
export async function readAndCheck(
  store: Store,
  trajectoryId: string,
  messages: readonly ChatMessage[],
  keyDigest: string | undefined,
): Promise<{ view: HeadView; fresh: Extract<NewMessages, { ok: true }> }> {
  const head = await store.getTrajectoryHead(trajectoryId).catch((error: unknown) => {
    if (isStoreError(error, 'validation')) {
      throw invalidField('x-edgerl-trajectory', 'must be a trajectory id (a uuid)');
    }
    throw error;
  });
  const { trajectory } = head;
  const refused = accessRefusal(
    { writer: trajectory.writer, keyDigest: head.keyDigest },
    { writer: 'client', ...(keyDigest !== undefined ? { keyDigest } : {}) },
    trajectoryId,
  );
  if (refused) throw refused;
  if (trajectory.status !== 'running') {
    throw new ApiError(
      'conflict',
      `trajectory ${trajectoryId} is ${trajectory.status}; it takes no more turns`,
    );
  }
  const fresh = await checkHistory(store, head, messages);
  if (!fresh.ok) throw new ApiError('conflict', `${fresh.field}: ${fresh.message}`, { field: fresh.field });
  const view: HeadView = {
    turnCount: trajectory.turnCount,
    historyDigest: head.historyDigest,
    tools: trajectory.tools,
    route: recordedRoute(trajectory),
    keyDigest: head.keyDigest,
  };
  return { view, fresh };
}
