// The id of a `message` output item the recording proxy returns: derived from the trajectory and the
// index of the assistant turn the reply is stored as (`msg_<trajectory id, 32 hex>_<turn>`), so an
// `item_reference` to it names that stored turn exactly, with nothing more to store or look up than
// the turn itself. Leaves out serve-model's ids, which name nothing (response-envelope.ts). Pure.

/** What a recorded message item's id names. */
export interface RecordedItem {
  /** The trajectory id as 32 lowercase hex digits (no dashes). */
  readonly trajectoryHex: string;
  /** The index of the assistant turn the reply is stored as. */
  readonly turnIndex: number;
  /** The message item's place among the reply's message items: 0 but for text after a tool call. */
  readonly part: number;
}

const pattern = /^msg_([0-9a-f]{32})_(\d{1,9})(?:_([1-9]\d{0,8}))?$/;

/** The trajectory id in the form an item id carries it. */
export function trajectoryHex(trajectoryId: string): string {
  return trajectoryId.replaceAll('-', '').toLowerCase();
}

/** The id of the first message item of the reply stored as turn `turnIndex`; a later one adds `_<part>`. */
export function recordedItemId(trajectoryId: string, turnIndex: number): string {
  return `msg_${trajectoryHex(trajectoryId)}_${turnIndex}`;
}

/** What `id` names, or undefined when it is no id recordedItemId makes. */
export function readRecordedItemId(id: string): RecordedItem | undefined {
  const match = pattern.exec(id);
  if (!match?.[1] || !match[2]) return undefined;
  return { trajectoryHex: match[1], turnIndex: Number(match[2]), part: match[3] ? Number(match[3]) : 0 };
}
