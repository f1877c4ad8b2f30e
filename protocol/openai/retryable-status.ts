// Which HTTP statuses from an OpenAI-compatible endpoint are worth another attempt. Only the status:
// network errors and timeouts are each client's to classify, since only it knows how they surfaced.

/**
 * 408 Request Timeout, 409 Conflict, 429 Too Many Requests and every 5xx: the rule of the OpenAI
 * SDKs (openai-node README, "Retries"; its `shouldRetry` calls a 409 a lock timeout), whose API both
 * of edgerl's clients may talk to. The edge's policy client and the RULER judge had
 * retried 408, 429 and 5xx only; 409 is added to follow the documented rule. Every other 4xx means
 * the request itself is wrong and would fail the same way again.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
