import { describe, expect, it } from 'vitest';
import { parseJudgeAnswer } from './parse-judge-answer.ts';

const labels = ['k7q', 'b3x', 'm4n'];
const entry = (id: unknown, score: unknown, explanation = 'ok') => ({
  trajectory_id: id,
  explanation,
  score,
});
const answer = (...entries: unknown[]) => JSON.stringify({ scores: entries });

describe('parseJudgeAnswer', () => {
  it('matches scores by id, whatever order the judge listed them in', () => {
    const parsed = parseJudgeAnswer(
      answer(entry('m4n', 0.1, 'bad'), entry('k7q', 0.9, 'good'), entry('b3x', 0.5)),
      labels,
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.scores.get('k7q')).toEqual({ score: 0.9, explanation: 'good' });
    expect(parsed.scores.get('m4n')).toEqual({ score: 0.1, explanation: 'bad' });
    expect(parsed.scores.get('b3x')?.score).toBe(0.5);
  });

  it('accepts the bounds 0 and 1 exactly', () => {
    expect(parseJudgeAnswer(answer(entry('k7q', 0), entry('b3x', 1), entry('m4n', 0.5)), labels).ok).toBe(
      true,
    );
  });

  it('finds the JSON in prose, in a fenced block, after reasoning, or as a bare list', () => {
    const json = answer(entry('k7q', 0.9), entry('b3x', 0.5), entry('m4n', 0.1));
    const texts = [
      `Here are my scores:\n${json}\nHope this helps.`,
      `Scores below.\n\`\`\`json\n${json}\n\`\`\``,
      `<think>Trajectory k7q used {"q": 1} well.</think>\n${json}`,
      JSON.stringify([entry('k7q', 0.9), entry('b3x', 0.5), entry('m4n', 0.1)]),
    ];
    for (const text of texts) {
      const parsed = parseJudgeAnswer(text, labels);
      expect(parsed.ok, text).toBe(true);
      if (parsed.ok) expect(parsed.scores.get('m4n')?.score).toBe(0.1);
    }
  });

  const failures: [string, string | null, string][] = [
    ['empty-answer', '   ', 'the answer is empty'],
    ['empty-answer', null, 'the answer is empty'],
    ['malformed-json', '{"scores": [{"trajectory_id": "k7q", ', 'no parseable JSON'],
    ['wrong-shape', '{"ratings": []}', 'no {"scores": [...]}'],
    [
      'wrong-shape',
      answer(entry(3, 0.5), entry('b3x', 0.5), entry('m4n', 0.5)),
      'scores[0]: bad or missing trajectory_id',
    ],
    [
      'unknown-id',
      answer(entry('zzz', 0.5), entry('b3x', 0.5), entry('m4n', 0.5)),
      'unknown trajectory_id "zzz"',
    ],
    ['duplicate-id', answer(entry('k7q', 0.5), entry('k7q', 0.6), entry('m4n', 0.5)), '"k7q" appears twice'],
    ['wrong-count', answer(entry('k7q', 0.5), entry('b3x', 0.5)), 'expected 3 scores, got 2'],
    [
      'not-a-number',
      answer(entry('k7q', '0.5'), entry('b3x', 0.5), entry('m4n', 0.5)),
      'score "0.5" is not a number',
    ],
    [
      'not-a-number',
      answer(entry('k7q', null), entry('b3x', 0.5), entry('m4n', 0.5)),
      'score null is not a number',
    ],
    [
      'out-of-range',
      answer(entry('k7q', 7), entry('b3x', 0.5), entry('m4n', 0.5)),
      'score 7 is outside [0, 1]',
    ],
    [
      'out-of-range',
      answer(entry('k7q', -0.1), entry('b3x', 0.5), entry('m4n', 0.5)),
      'score -0.1 is outside',
    ],
  ];
  for (const [code, text, message] of failures) {
    it(`reports ${code}: ${message}`, () => {
      const parsed = parseJudgeAnswer(text, labels);
      expect(parsed.ok).toBe(false);
      if (parsed.ok) return;
      expect(parsed.code).toBe(code);
      expect(parsed.message).toContain(message);
    });
  }

  it('does not repeat its code in the message (readers print `code: message`)', () => {
    const parsed = parseJudgeAnswer('{"scores": [', labels);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.code).toBe('malformed-json');
    expect(`${parsed.code}: ${parsed.message}`).not.toMatch(/malformed-json: malformed-json/);
    expect(parsed.message).toMatch(/^no parseable JSON/);
  });

  it('names a bare NaN as not a number rather than as broken JSON', () => {
    const text =
      '{"scores": [{"trajectory_id": "k7q", "explanation": "x", "score": NaN}, ' +
      '{"trajectory_id": "b3x", "explanation": "x", "score": 0.5}, {"trajectory_id": "m4n", "explanation": "x", "score": 0.5}]}';
    const parsed = parseJudgeAnswer(text, labels);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toContain('"k7q": score "NaN" is not a number');
  });

  it('names every missing id along with the wrong count', () => {
    const parsed = parseJudgeAnswer(answer(entry('b3x', 0.5)), labels);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((issue) => issue.code)).toEqual(['wrong-count', 'missing-id', 'missing-id']);
    expect(parsed.message).toContain('no score for "k7q"');
    expect(parsed.message).toContain('no score for "m4n"');
  });
});
