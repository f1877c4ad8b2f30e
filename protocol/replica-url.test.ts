import { describe, expect, it } from 'vitest';
import { replicaUrlProblem } from './replica-url.ts';

describe('replicaUrlProblem', () => {
  it('names the problem without quoting credentials', () => {
    expect(replicaUrlProblem('https://ops:s3cret@gpu-1.internal:8000')).toBe(
      'must end in /v1 (the OpenAI base URL), got "https://ops:***@gpu-1.internal:8000"; try "https://ops:***@gpu-1.internal:8000/v1"',
    );
    expect(replicaUrlProblem('ftp://ops:s3cret@gpu-1/v1')).toBe(
      'must be an http(s) URL such as http://127.0.0.1:8000/v1, got "ftp://ops:***@gpu-1/v1"',
    );
    expect(replicaUrlProblem('http://127.0.0.1:8000/v1')).toBeUndefined();
  });
});
