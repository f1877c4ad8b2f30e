// The docs' structure: every relative link in README.md and docs/*.md points at a file that exists (and at
// a heading of it, when it names one), every repository path they name in code spans exists, the README
// links every docs page, and stays within 150 lines.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkout as root, docFiles, docPages as pages, readDoc as read } from './doc-files.ts';
import { headingAnchors, relativeLinks, repositoryPaths } from './doc-links.ts';

describe('the docs', () => {
  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of docFiles) {
      for (const link of relativeLinks(read(file))) {
        const target = link.path === '' ? join(root, file) : resolve(dirname(join(root, file)), link.path);
        const name = relative(root, target);
        if (!existsSync(target)) {
          broken.push(`${file}:${link.line}: ${link.path} does not exist`);
        } else if (link.anchor !== undefined) {
          const isMarkdown = target.endsWith('.md') && statSync(target).isFile();
          if (!isMarkdown || !headingAnchors(readFileSync(target, 'utf8')).has(link.anchor)) {
            broken.push(`${file}:${link.line}: ${name} has no heading #${link.anchor}`);
          }
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('name only repository paths that exist', () => {
    const missing = docFiles.flatMap((file) =>
      repositoryPaths(read(file))
        .filter((path) => !pathExists(path))
        .map((path) => `${file}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('are all linked from the README', () => {
    const linked = new Set(
      relativeLinks(read('README.md')).map((link) => relative(root, resolve(root, link.path))),
    );
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('keep the README within 150 lines', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(150);
  });
});

/** Whether the path exists; a `*` in the last segment matches any run of characters, as in `ab-*.ts`. */
function pathExists(path: string): boolean {
  const trimmed = path.replace(/\/$/, '');
  if (!trimmed.includes('*')) return existsSync(join(root, trimmed));
  const folder = dirname(trimmed);
  const pattern = new RegExp(
    `^${trimmed
      .slice(folder.length + 1)
      .split('*')
      .map(escapeRegExp)
      .join('.*')}$`,
  );
  return existsSync(join(root, folder)) && readdirSync(join(root, folder)).some((name) => pattern.test(name));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}
