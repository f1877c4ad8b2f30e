// Guided choice (vLLM's `structured_outputs: {choice: [...]}`, formerly `guided_choice`): the output
// must be exactly one of the given strings. Works on bytes, so any tokenization of a choice is
// allowed (byte pieces, merged pieces or an added token such as `<tool_call>`); once a choice is
// complete only the stop tokens may follow, as vLLM's grammar backends end at an accepting state.
// Leaves out regex, JSON-schema and grammar constraints.

export interface ChoiceConstraint {
  /** Ids that may come next after `generated`; empty when nothing may (the caller then stops). */
  allowed(generated: readonly number[]): number[];
}

function startsWith(whole: Uint8Array, part: Uint8Array, at: number): boolean {
  if (at + part.length > whole.length) return false;
  for (let i = 0; i < part.length; i++) if (whole[at + i] !== part[i]) return false;
  return true;
}

/**
 * `tokenBytes[id]` holds each id's bytes, one entry per id of the model's vocabulary (empty for ids
 * the tokenizer does not know); `stopTokenIds` may follow a complete choice and never spell text.
 */
export function choiceConstraint(
  choices: readonly string[],
  tokenBytes: readonly Uint8Array[],
  stopTokenIds: readonly number[],
): ChoiceConstraint {
  const encoder = new TextEncoder();
  const targets = choices.map((choice) => encoder.encode(choice));
  const stops = new Set(stopTokenIds);
  const none = new Uint8Array(0);
  const bytesOf = tokenBytes.map((bytes, id) => (stops.has(id) ? none : bytes));
  return {
    allowed(generated) {
      const parts = generated.map((id) => bytesOf[id] ?? none);
      const done = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
      let offset = 0;
      for (const part of parts) {
        done.set(part, offset);
        offset += part.length;
      }
      const open = targets.filter((target) => startsWith(target, done, 0));
      const out = new Set<number>();
      if (open.some((target) => target.length === done.length)) for (const id of stops) out.add(id);
      for (let id = 0; id < bytesOf.length; id++) {
        const bytes = bytesOf[id] as Uint8Array;
        if (bytes.length > 0 && open.some((target) => startsWith(target, bytes, done.length))) out.add(id);
      }
      return [...out].sort((a, b) => a - b);
    },
  };
}
