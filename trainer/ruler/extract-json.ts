// Finds the JSON inside a judge's free-text answer, for endpoints that cannot be held to JSON output:
// the whole text, then fenced code blocks, then every balanced {...} / [...] span, with reasoning
// (<think>…</think>) removed first. Pure; returns candidates, the caller decides which one is the answer.
import { errorMessage } from '../../protocol/error-message.ts';

/** Candidate JSON texts, most likely first, without duplicates. */
export function extractJsonCandidates(text: string): string[] {
  const visible = text.replace(/<think>[\s\S]*?(<\/think>|$)/g, '').trim();
  const candidates = [visible];
  for (const match of visible.matchAll(/```[a-zA-Z0-9_-]*[ \t]*\n([\s\S]*?)```/g)) {
    if (match[1]) candidates.push(match[1].trim());
  }
  // Later spans first: models that explain themselves usually put the answer last.
  candidates.push(...balancedSpans(visible).reverse());
  return [...new Set(candidates.filter((candidate) => candidate.length > 0))];
}

/**
 * Parses JSON, also accepting the bare NaN / Infinity tokens some models write as numbers: they become
 * the strings "NaN" / "Infinity" so that validation can name them as "not a number" instead of reporting
 * the whole answer as broken JSON.
 */
export function parseLenientJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const repaired = text.replace(/([:[,]\s*)(-?Infinity|NaN)(?=\s*[,}\]])/g, '$1"$2"');
    if (repaired !== text) {
      try {
        return { ok: true, value: JSON.parse(repaired) };
      } catch {
        // fall through to the original error, which points at the real problem
      }
    }
    return { ok: false, error: errorMessage(error) };
  }
}

/** Outermost balanced {...} and [...] spans, skipping brackets inside JSON strings. */
function balancedSpans(text: string): string[] {
  const spans: string[] = [];
  let index = 0;
  while (index < text.length) {
    const open = text[index];
    if (open === '{' || open === '[') {
      const end = matchingClose(text, index);
      if (end !== undefined) {
        spans.push(text.slice(index, end + 1));
        index = end + 1;
        continue;
      }
    }
    index++;
  }
  return spans;
}

function matchingClose(text: string, start: number): number | undefined {
  const stack: string[] = [];
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{') stack.push('}');
    else if (char === '[') stack.push(']');
    else if (char === '}' || char === ']') {
      if (stack.pop() !== char) return undefined;
      if (stack.length === 0) return index;
    }
  }
  return undefined;
}
