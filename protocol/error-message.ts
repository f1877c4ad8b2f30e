// The one-line text of anything thrown, for reasons, observations and logs: the one helper every package
// uses instead of casting (`(error as Error).message` breaks on a thrown string).

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
