// Turns zod issues into one line that names each offending field, for 400s and CLI errors.
import type { z } from 'zod';

export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}
