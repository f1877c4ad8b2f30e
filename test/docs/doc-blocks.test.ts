// The docs test's readers on small hand-written pages: which lines become commands, how skip markers
// attach to blocks, which markers are refused; and the link and heading-anchor readers.
import { describe, expect, it } from 'vitest';
import { edgerlInvocations, extractCommands, startsInBackground } from './doc-blocks.ts';
import { headingAnchors, relativeLinks, repositoryPaths } from './doc-links.ts';

const page = [
  '# Title', // 1
  '', // 2
  '```sh', // 3
  '# a comment', // 4
  'npx edgerl sql "select 1"   # trailing comment stays', // 5
  '', // 6
  'edgerl train --once \\', // 7
  '  --policy agent', // 8
  '```', // 9
  '', // 10
  '<!-- docs-test: skip: serves until stopped -->', // 11
  '', // 12
  '```bash', // 13
  'npx edgerl edge', // 14
  '```', // 15
  '```python', // 16
  'print("not a shell command")', // 17
  '```', // 18
].join('\n');

describe('extractCommands', () => {
  it('reads each command of sh and bash blocks, joining continuations and dropping comments', () => {
    const { commands, problems } = extractCommands('page.md', page);
    expect(problems).toEqual([]);
    expect(commands).toEqual([
      { file: 'page.md', line: 5, command: 'npx edgerl sql "select 1"   # trailing comment stays' },
      { file: 'page.md', line: 7, command: 'edgerl train --once \\\n  --policy agent' },
      { file: 'page.md', line: 14, command: 'npx edgerl edge', skip: 'serves until stopped' },
    ]);
  });

  it('refuses markers without a reason, unknown directives, stray markers and other shell languages', () => {
    const bad = [
      '<!-- docs-test: skip: -->', // 1: no reason
      '```sh',
      'true',
      '```',
      '<!-- docs-test: run -->', // 5: unknown
      '<!-- docs-test: skip: nothing follows -->', // 6: before prose
      'Some prose.',
      '<!-- docs-test: skip: before a python block -->', // 8
      '```python',
      '```',
      '```shell', // 11
      'ls',
      '```',
    ].join('\n');
    const { commands, problems } = extractCommands('bad.md', bad);
    expect(commands).toEqual([{ file: 'bad.md', line: 3, command: 'true' }]);
    expect(problems).toEqual([
      'bad.md:1: a skip marker needs its reason',
      'bad.md:5: unknown docs-test directive (write "docs-test: skip: REASON" or "docs-test: background: URL …")',
      'bad.md:6: marker not followed by a sh/bash block',
      'bad.md:8: marker not followed by a sh/bash block',
      'bad.md:11: a `shell` block: write sh or bash so the docs test runs it',
    ]);
  });
});

describe('background blocks', () => {
  it("give each server started with & its marker's URL in order, and mark the whole block", () => {
    const page = [
      '<!-- docs-test: background: http://127.0.0.1:8000/health http://127.0.0.1:8787/health -->', // 1
      '```sh', // 2
      'npx edgerl serve-model --model ./tiny &', // 3
      'npx edgerl edge \\', // 4
      '  --port 8787 &    # a comment', // 5
      'npx edgerl rollout --env x && echo done', // 6
      'kill %2; wait %2', // 7
      '```', // 8
    ].join('\n');
    const { commands, problems } = extractCommands('page.md', page);
    expect(problems).toEqual([]);
    expect(commands).toEqual([
      {
        file: 'page.md',
        line: 3,
        command: 'npx edgerl serve-model --model ./tiny &',
        withServers: true,
        readyUrl: 'http://127.0.0.1:8000/health',
      },
      {
        file: 'page.md',
        line: 4,
        command: 'npx edgerl edge \\\n  --port 8787 &    # a comment',
        withServers: true,
        readyUrl: 'http://127.0.0.1:8787/health',
      },
      { file: 'page.md', line: 6, command: 'npx edgerl rollout --env x && echo done', withServers: true },
      { file: 'page.md', line: 7, command: 'kill %2; wait %2', withServers: true },
    ]);
  });

  it('refuses a server without a marker, a count that differs from the URLs, and a marker without URLs', () => {
    const page = [
      '```sh', // 1
      'npx edgerl edge &', // 2
      '```', // 3
      '<!-- docs-test: background: http://127.0.0.1:8787/health -->', // 4
      '```sh',
      'true',
      '```',
      '<!-- docs-test: background: port 8787 -->', // 8
      '```sh',
      'true',
      '```',
    ].join('\n');
    expect(extractCommands('p.md', page).problems).toEqual([
      'p.md:2: a command ending in & needs a "docs-test: background: URL" marker before its block',
      'p.md:4: the block starts 0 server(s) with & but its marker lists 1 URL(s)',
      'p.md:8: a background marker lists the URL each server answers at once it is ready (http://…)',
    ]);
  });

  it('tell a background & from && and from an & inside a comment', () => {
    expect(startsInBackground('a &')).toBe(true);
    expect(startsInBackground('a & # note')).toBe(true);
    expect(startsInBackground('a && b')).toBe(false);
    expect(startsInBackground('a # b & c')).toBe(false);
    expect(startsInBackground('a \\\n  b &')).toBe(true);
  });
});

describe('edgerlInvocations', () => {
  it('finds each edgerl call with its words, up to the next shell operator or comment', () => {
    expect(
      edgerlInvocations(
        `*/15 * * * * cd /srv && npx edgerl train --once \\\n  --serving-dir /srv/a >> train.log 2>&1`,
      ),
    ).toEqual([['train', '--once', '--serving-dir', '/srv/a']]);
    expect(edgerlInvocations(`DATABASE_URL='postgresql://…' npx edgerl db migrate  # note`)).toEqual([
      ['db', 'migrate'],
    ]);
    expect(edgerlInvocations(`npx edgerl sql "select a from b" --json`)).toEqual([
      ['sql', '"select a from b"', '--json'],
    ]);
  });
});

describe('relativeLinks, repositoryPaths and headingAnchors', () => {
  it('reads repository paths from code spans, leaving out templates and code blocks', () => {
    const text = [
      'In `edge/routing/resolve-route.ts` and `cli/commands/ab-*.ts`, not `agent@7` or `a/b`.',
      '`<output-dir>/checkpoints/{step:04d}/` and `trainer/{x}` are templates.',
      '```',
      '`db/store.ts`',
      '```',
    ].join('\n');
    expect(repositoryPaths(text)).toEqual(['edge/routing/resolve-route.ts', 'cli/commands/ab-*.ts']);
  });

  it('reads relative links outside code, with their anchors', () => {
    const text = [
      'See [a](docs/a.md), [b](b.md#some-part) and [web](https://example.com).',
      '`[not](a-link.md)` and [self](#top)',
      '```',
      '[in](code.md)',
      '```',
    ].join('\n');
    expect(relativeLinks(text)).toEqual([
      { line: 1, path: 'docs/a.md' },
      { line: 1, path: 'b.md', anchor: 'some-part' },
      { line: 2, path: '', anchor: 'top' },
    ]);
  });

  it("makes GitHub's anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered", () => {
    const text = [
      '# The trainer (`trainer/train/`, `edgerl train`)',
      '## Speed',
      '### Speed',
      '## A/B: why?',
    ].join('\n');
    expect([...headingAnchors(text)]).toEqual([
      'the-trainer-trainertrain-edgerl-train',
      'speed',
      'speed-1',
      'ab-why',
    ]);
  });
});
