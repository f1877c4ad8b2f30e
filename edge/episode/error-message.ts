// The one-line text of anything thrown, for reasons and observations.

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
