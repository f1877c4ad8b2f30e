// Validates a judge's answer against the labels it was shown and returns one score per label, or every
// problem found, each with a stable code. Pure. Unlike RULER upstream (scores zipped by list position,
// no range check: ART/RULER notes §2.4, ART #477), scores are matched by id and any doubt is an error.
import { z } from 'zod';
import { extractJsonCandidates, parseLenientJson } from './extract-json.ts';

export const judgeAnswerIssueCodes = [
  'empty-answer',
  'malformed-json',
  'wrong-shape',
  'unknown-id',
  'duplicate-id',
  'missing-id',
  'wrong-count',
  'not-a-number',
  'out-of-range',
] as const;
export type JudgeAnswerIssueCode = (typeof judgeAnswerIssueCodes)[number];

export interface JudgeAnswerIssue {
  readonly code: JudgeAnswerIssueCode;
  readonly message: string;
}

export interface LabelScore {
  readonly score: number;
  readonly explanation: string;
}

export type ParsedJudgeAnswer =
  | { readonly ok: true; readonly scores: ReadonlyMap<string, LabelScore> }
  | {
      readonly ok: false;
      /** The first issue's code. */
      readonly code: JudgeAnswerIssueCode;
      /** All issues on one line, for logs and for the judge's repair prompt. */
      readonly message: string;
      readonly issues: readonly JudgeAnswerIssue[];
    };

const entrySchema = z.object({
  trajectory_id: z.string().min(1),
  explanation: z.string(),
  score: z.unknown(),
});

export function parseJudgeAnswer(
  content: string | null | undefined,
  labels: readonly string[],
): ParsedJudgeAnswer {
  if (!content || content.trim() === '')
    return failure([{ code: 'empty-answer', message: 'the answer is empty' }]);

  const located = locateEntries(content);
  if (!located.ok) return failure([located.issue]);

  const issues: JudgeAnswerIssue[] = [];
  const expected = new Set(labels);
  const scores = new Map<string, LabelScore>();
  located.entries.forEach((raw, index) => {
    const entry = entrySchema.safeParse(raw);
    if (!entry.success) {
      const fields = entry.error.issues.map((issue) => issue.path.join('.') || '(entry)').join(', ');
      issues.push({ code: 'wrong-shape', message: `scores[${index}]: bad or missing ${fields}` });
      return;
    }
    const { trajectory_id: id, explanation, score } = entry.data;
    if (!expected.has(id)) {
      issues.push({ code: 'unknown-id', message: `scores[${index}]: unknown trajectory_id "${id}"` });
      return;
    }
    if (scores.has(id)) {
      issues.push({ code: 'duplicate-id', message: `scores[${index}]: trajectory_id "${id}" appears twice` });
      return;
    }
    if (typeof score !== 'number' || !Number.isFinite(score)) {
      issues.push({
        code: 'not-a-number',
        message: `"${id}": score ${JSON.stringify(score)} is not a number`,
      });
    } else if (score < 0 || score > 1) {
      issues.push({ code: 'out-of-range', message: `"${id}": score ${score} is outside [0, 1]` });
    }
    // Recorded even when the score is bad, so the id does not also count as missing.
    scores.set(id, { score: typeof score === 'number' ? score : Number.NaN, explanation });
  });

  if (located.entries.length !== labels.length) {
    issues.push({
      code: 'wrong-count',
      message: `expected ${labels.length} scores, got ${located.entries.length}`,
    });
  }
  for (const label of labels) {
    if (!scores.has(label) && !issues.some((issue) => issue.code === 'wrong-shape')) {
      issues.push({ code: 'missing-id', message: `no score for "${label}"` });
    }
  }
  return issues.length > 0 ? failure(issues) : { ok: true, scores };
}

type Located = { ok: true; entries: unknown[] } | { ok: false; issue: JudgeAnswerIssue };

/** The `scores` list of the first candidate that parses as JSON and has the answer's shape. */
function locateEntries(content: string): Located {
  let firstParseError: string | undefined;
  let parsedSomething = false;
  for (const candidate of extractJsonCandidates(content)) {
    const parsed = parseLenientJson(candidate);
    if (!parsed.ok) {
      firstParseError ??= parsed.error;
      continue;
    }
    parsedSomething = true;
    const value = parsed.value;
    // A bare list of entries is accepted too: text-mode judges often drop the wrapper object.
    if (Array.isArray(value)) return { ok: true, entries: value };
    if (isRecord(value) && Array.isArray(value.scores)) return { ok: true, entries: value.scores };
  }
  if (parsedSomething) {
    return {
      ok: false,
      issue: { code: 'wrong-shape', message: 'no {"scores": [...]} object in the answer' },
    };
  }
  return {
    ok: false,
    issue: {
      code: 'malformed-json',
      message: `no parseable JSON in the answer (${firstParseError ?? 'nothing that looks like JSON'}): ${excerpt(content)}`,
    },
  };
}

function failure(issues: JudgeAnswerIssue[]): ParsedJudgeAnswer {
  const first = issues[0] as JudgeAnswerIssue;
  // The first issue's code is the result's `code`, which every reader prints before the message.
  const shown = issues
    .slice(0, 6)
    .map((issue, i) => (i === 0 ? issue.message : `${issue.code}: ${issue.message}`));
  if (issues.length > shown.length) shown.push(`… ${issues.length - shown.length} more`);
  return { ok: false, code: first.code, message: shown.join('; '), issues };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > 120 ? `${flat.slice(0, 120)}…` : flat);
}
