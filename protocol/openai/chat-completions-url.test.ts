import { describe, expect, it } from 'vitest';
import { chatCompletionsUrl } from './chat-completions-url.ts';

describe('chatCompletionsUrl', () => {
  it('appends the path once, whatever trailing slashes the root has', () => {
    expect(chatCompletionsUrl('http://127.0.0.1:8000/v1')).toBe('http://127.0.0.1:8000/v1/chat/completions');
    expect(chatCompletionsUrl('https://api.openai.com/v1//')).toBe(
      'https://api.openai.com/v1/chat/completions',
    );
  });
});
