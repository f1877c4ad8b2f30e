// The `response_format` values RULER asks the judge endpoint for, strongest first: a strict JSON schema
// (OpenAI structured outputs; vLLM and Ollama accept the same shape), plain JSON mode, or nothing (the
// answer is then pulled out of free text by parse-judge-answer.ts).
//
// The schema keeps to the subset OpenAI's strict mode accepts (every property required,
// additionalProperties false, `enum` allowed; no numeric bounds, so the [0, 1] range is checked by the
// parser instead). `explanation` comes before `score` so the judge writes its reasons first.

import { assertNever } from '../../protocol/statuses.ts';

export const responseModes = ['json_schema', 'json_object', 'text'] as const;
export type ResponseMode = (typeof responseModes)[number];

/** The next weaker mode, or undefined after plain text. */
export function weakerMode(mode: ResponseMode): ResponseMode | undefined {
  return responseModes[responseModes.indexOf(mode) + 1];
}

export function judgeResponseFormat(mode: ResponseMode, labels: readonly string[]): object | undefined {
  switch (mode) {
    case 'json_schema':
      return {
        type: 'json_schema',
        json_schema: { name: 'ruler_scores', strict: true, schema: answerSchema(labels) },
      };
    case 'json_object':
      return { type: 'json_object' };
    case 'text':
      return undefined;
    default:
      return assertNever(mode, 'response mode');
  }
}

function answerSchema(labels: readonly string[]): object {
  return {
    type: 'object',
    properties: {
      scores: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            trajectory_id: { type: 'string', enum: [...labels] },
            explanation: { type: 'string' },
            score: { type: 'number' },
          },
          required: ['trajectory_id', 'explanation', 'score'],
          additionalProperties: false,
        },
      },
    },
    required: ['scores'],
    additionalProperties: false,
  };
}
