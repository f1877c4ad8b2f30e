// `item_reference` input items (https://platform.openai.com/docs/api-reference/responses/create,
// input → Item reference: `{type?: "item_reference", id}`), which `@ai-sdk/openai` sends with its
// default `store: true` in place of an earlier assistant text it was given an item id for. The
// recording proxy resolves the ids it issued (recorded-item-id.ts): each becomes the assistant message
// of the stored turn it names, so the request is then the same as one that sent the text inline.
// Leaves out the store read (edge/proxy/record-response.ts) and any other kind of stored item. Pure.
import { readRecordedItemId, trajectoryHex } from './recorded-item-id.ts';
import type { ResponsesRequest } from './responses-request.ts';

type Json = Record<string, unknown>;

/** An `item_reference` of the request, read. */
export interface ItemReference {
  /** Its place in `input`. */
  readonly position: number;
  readonly id: string;
  readonly turnIndex: number;
  /** The message item's place in its reply (recorded-item-id.ts). */
  readonly part: number;
}

/** The stored turn a reference may name: what resolution reads of it. */
export interface ReferencedTurn {
  readonly index: number;
  readonly role: string;
  readonly content: string | null;
  readonly metadata?: { readonly fromClient?: true | undefined } | null | undefined;
}

export type Refusal = { readonly ok: false; readonly field: string; readonly message: string };

/** True for an item_reference item: its `type` says so, or (the type is optional) it has only an id. */
export function isItemReference(item: Json): boolean {
  if (item.type === 'item_reference') return true;
  return item.type === undefined && item.role === undefined && item.id !== undefined;
}

/**
 * The request's item references, each read as a message item of this trajectory's replies; a
 * refusal naming `input.N.id` for an id the edge did not issue or issued for another trajectory.
 */
export function findItemReferences(
  request: ResponsesRequest,
  trajectoryId: string,
): { readonly ok: true; readonly references: readonly ItemReference[] } | Refusal {
  if (typeof request.input === 'string') return { ok: true, references: [] };
  const references: ItemReference[] = [];
  const own = trajectoryHex(trajectoryId);
  for (const [position, item] of request.input.entries()) {
    if (!isItemReference(item)) continue;
    const field = `input.${position}.id`;
    const { id } = item;
    if (typeof id !== 'string') {
      return refuse(field, 'an item_reference needs the id (a string) of an item this edge returned');
    }
    const named = readRecordedItemId(id);
    if (!named) {
      return refuse(
        field,
        `${shown(id)} is not an item this edge returned: edgerl keeps no responses and resolves only the ids of the message items it returned on this trajectory; send the item itself`,
      );
    }
    if (named.trajectoryHex !== own) {
      return refuse(
        field,
        `${shown(id)} is a message item of another trajectory: a request refers only to replies of the trajectory it records to; send the item itself`,
      );
    }
    references.push({ position, id, turnIndex: named.turnIndex, part: named.part });
  }
  return { ok: true, references };
}

/**
 * The request with each reference replaced by the assistant message of the turn it names: the turn's
 * text for the reply's first message item, nothing for a later one (a stored turn holds all of a
 * reply's text at once, and consecutive assistant items join into one message: to-chat-request.ts).
 * A refusal names `input.N.id` when the turn is not a stored reply of the edge's.
 */
export function resolveItemReferences(
  request: ResponsesRequest,
  references: readonly ItemReference[],
  turns: readonly ReferencedTurn[],
): { readonly ok: true; readonly request: ResponsesRequest } | Refusal {
  if (references.length === 0 || typeof request.input === 'string') return { ok: true, request };
  const byIndex = new Map(turns.map((turn) => [turn.index, turn]));
  const input: Json[] = [...request.input];
  for (const reference of references) {
    const field = `input.${reference.position}.id`;
    const turn = byIndex.get(reference.turnIndex);
    if (!turn) {
      return refuse(
        field,
        `${shown(reference.id)} names turn ${reference.turnIndex}, which this trajectory does not hold (its reply was not recorded); send the item itself`,
      );
    }
    if (turn.role !== 'assistant' || turn.metadata?.fromClient === true) {
      const what = turn.role === 'assistant' ? 'an assistant message the client sent' : `a ${turn.role} turn`;
      return refuse(
        field,
        `${shown(reference.id)} names turn ${reference.turnIndex}, ${what}, not a reply this edge returned; send the item itself`,
      );
    }
    const text = reference.part === 0 ? (turn.content ?? '') : '';
    input[reference.position] = { type: 'message', role: 'assistant', content: text };
  }
  return { ok: true, request: { ...request, input } };
}

function refuse(field: string, message: string): Refusal {
  return { ok: false, field, message };
}

/** An untrusted id as a message shows it: quoted, and cut short. */
function shown(id: string): string {
  return JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id);
}
