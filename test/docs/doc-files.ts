// Which files are the docs: README.md and every page under docs/, as paths relative to the checkout.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const checkout = resolve(import.meta.dirname, '../..');

export const docPages = readdirSync(join(checkout, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/${name}`);

export const docFiles = ['README.md', ...docPages];

export function readDoc(file: string): string {
  return readFileSync(join(checkout, file), 'utf8');
}
