import { describe, expect, it } from 'vitest';
import { RulerConfigError, resolveRulerConfig, rulerConfigFromEnv } from './ruler-config.ts';

describe('rulerConfigFromEnv', () => {
  it('reads the judge endpoint and fills the documented defaults', () => {
    const config = rulerConfigFromEnv({
      EDGERL_JUDGE_BASE_URL: 'https://api.openai.com/v1',
      EDGERL_JUDGE_MODEL: 'gpt-4.1-mini',
      EDGERL_JUDGE_API_KEY: 'sk-test',
      EDGERL_JUDGE_ORDERINGS: '2',
    });
    expect(config).toMatchObject({
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4.1-mini',
      apiKey: 'sk-test',
      orderings: 2,
      timeoutMs: 120_000,
      maxRetries: 2,
      seed: 0,
      rewardWeights: { judge: 1, verifier: 0 },
    });
    expect(config.pricePromptPerMillion).toBeUndefined();
  });

  it('names every missing variable', () => {
    expect(() => rulerConfigFromEnv({})).toThrow(/set EDGERL_JUDGE_BASE_URL, EDGERL_JUDGE_MODEL/);
    expect(() =>
      rulerConfigFromEnv({ EDGERL_JUDGE_BASE_URL: 'https://openrouter.ai/api/v1', EDGERL_JUDGE_MODEL: 'm' }),
    ).toThrow(/set EDGERL_JUDGE_API_KEY/);
    expect(() => rulerConfigFromEnv({})).toThrow(RulerConfigError);
  });

  it('needs no key for a judge on localhost (vLLM, Ollama)', () => {
    const config = rulerConfigFromEnv({
      EDGERL_JUDGE_BASE_URL: 'http://127.0.0.1:11434/v1',
      EDGERL_JUDGE_MODEL: 'qwen3:32b',
    });
    expect(config.apiKey).toBeUndefined();
  });

  it('names a variable that is not a number, and checks fields across each other', () => {
    const base = { EDGERL_JUDGE_BASE_URL: 'http://localhost:8000/v1', EDGERL_JUDGE_MODEL: 'm' };
    expect(() => rulerConfigFromEnv({ ...base, EDGERL_JUDGE_TIMEOUT_MS: 'soon' })).toThrow(
      /EDGERL_JUDGE_TIMEOUT_MS must be a number, got "soon"/,
    );
    expect(() => rulerConfigFromEnv({ ...base, EDGERL_JUDGE_PRICE_PROMPT_PER_MTOK: '2' })).toThrow(
      /set both prices/,
    );
    expect(() => rulerConfigFromEnv({ ...base, EDGERL_JUDGE_ORDERINGS: '0' })).toThrow(/orderings/);
    expect(() => rulerConfigFromEnv({ ...base, EDGERL_RULER_JUDGE_WEIGHT: '0' })).toThrow(
      /at least one weight/,
    );
    expect(rulerConfigFromEnv({ ...base, EDGERL_RULER_VERIFIER_WEIGHT: '0.5' }).rewardWeights).toEqual({
      judge: 1,
      verifier: 0.5,
    });
  });

  it('lets explicit overrides win over the environment', () => {
    const config = rulerConfigFromEnv(
      { EDGERL_JUDGE_BASE_URL: 'http://localhost:8000/v1', EDGERL_JUDGE_MODEL: 'a', EDGERL_JUDGE_SEED: '5' },
      { model: 'b', rubric: 'Be brief.', seed: undefined },
    );
    expect(config.model).toBe('b');
    expect(config.rubric).toBe('Be brief.');
    expect(config.seed).toBe(5); // an undefined override (a flag not given) leaves the variable's value
  });
});

describe('resolveRulerConfig', () => {
  it('rejects a base URL that is not http(s)', () => {
    expect(() => resolveRulerConfig({ baseUrl: 'ftp://judge', model: 'm' })).toThrow(
      /baseUrl: must be an http\(s\) URL/,
    );
  });
});
