// Reads the shell commands out of the docs: every line of every ```sh / ```bash block, with `\`
// continuations joined and comments and blank lines dropped, and the block's marker if it has one on the
// line before the fence: `<!-- docs-test: skip: reason -->` (not run), or `<!-- docs-test: background:
// URL … -->` (the block starts servers with `&`: one URL per server, which answers once it is ready).
// Pure: text in, commands out.

/** Languages whose blocks are run. Other shell-like names are refused, so no block escapes the test. */
const runLanguages = new Set(['sh', 'bash']);
const otherShellLanguages = new Set(['shell', 'zsh', 'console', 'shell-session', 'shellsession']);

const markerPattern = /^<!--\s*docs-test:(.*?)-->\s*$/;

export interface DocCommand {
  /** The markdown file, relative to the repository root. */
  readonly file: string;
  /** 1-based line where the command starts. */
  readonly line: number;
  /** The command as bash gets it (continuation lines joined with their `\`). */
  readonly command: string;
  /** Why the block is not run, from its marker; undefined: it is run. */
  readonly skip?: string;
  /** A server the command starts in the background (`… &`): the URL that answers once it is ready. */
  readonly readyUrl?: string;
  /** In a block that starts servers: the commands run against them (rollouts, training) take minutes. */
  readonly withServers?: true;
}

type Marker =
  | { readonly kind: 'skip'; readonly reason: string }
  | { readonly kind: 'background'; readonly urls: readonly string[] };

export interface DocBlocks {
  readonly commands: DocCommand[];
  /** Markers that say nothing, name no known directive, or stand before no shell block. */
  readonly problems: string[];
}

export function extractCommands(file: string, markdown: string): DocBlocks {
  const lines = markdown.split('\n');
  const commands: DocCommand[] = [];
  const problems: string[] = [];
  let pending: { marker: Marker; line: number } | undefined;
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index] ?? '';
    const found = markerPattern.exec(text.trim());
    if (found) {
      if (pending) problems.push(`${file}:${pending.line}: marker not followed by a sh/bash block`);
      pending = undefined;
      const marker = readMarker(found[1] ?? '');
      if (typeof marker === 'string') problems.push(`${file}:${index + 1}: ${marker}`);
      else pending = { marker, line: index + 1 };
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(text);
    if (!fence) {
      if (pending && text.trim() !== '') {
        problems.push(`${file}:${pending.line}: marker not followed by a sh/bash block`);
        pending = undefined;
      }
      continue;
    }
    const language = (fence[3] ?? '').toLowerCase();
    const close = fence[2] ?? '```';
    let end = index + 1;
    while (end < lines.length && !(lines[end] ?? '').trim().startsWith(close)) end++;
    const body = lines.slice(index + 1, end);
    if (runLanguages.has(language)) {
      const block = blockCommands(body, index + 2).map((command) => ({ file, ...command }));
      commands.push(...markBlock(block, pending, problems));
    } else {
      if (otherShellLanguages.has(language)) {
        problems.push(
          `${file}:${index + 1}: a \`${language}\` block: write sh or bash so the docs test runs it`,
        );
      }
      if (pending) problems.push(`${file}:${pending.line}: marker not followed by a sh/bash block`);
    }
    pending = undefined;
    index = end;
  }
  if (pending) problems.push(`${file}:${pending.line}: marker not followed by a sh/bash block`);
  return { commands, problems };
}

/** The marker's directive, or what is wrong with it. */
function readMarker(text: string): Marker | string {
  const directive = /^\s*(skip|background):\s*(.*?)\s*$/.exec(text);
  if (!directive)
    return 'unknown docs-test directive (write "docs-test: skip: REASON" or "docs-test: background: URL …")';
  const rest = directive[2] ?? '';
  if (directive[1] === 'skip')
    return rest ? { kind: 'skip', reason: rest } : 'a skip marker needs its reason';
  const urls = rest.split(/\s+/).filter((word) => word !== '');
  if (urls.length === 0 || !urls.every((url) => /^https?:\/\/\S+$/.test(url)))
    return 'a background marker lists the URL each server answers at once it is ready (http://…)';
  return { kind: 'background', urls };
}

/**
 * The block's commands with its marker applied: a skip reason on each, or each `&` command's ready URL in
 * order. A server started outside a background block would outlive its command, so it is a problem.
 */
function markBlock(
  block: readonly DocCommand[],
  pending: { marker: Marker; line: number } | undefined,
  problems: string[],
): DocCommand[] {
  const marker = pending?.marker;
  if (marker?.kind === 'skip') return block.map((command) => ({ ...command, skip: marker.reason }));
  const servers = block.filter((command) => startsInBackground(command.command));
  if (marker?.kind !== 'background') {
    for (const command of servers) {
      problems.push(
        `${command.file}:${command.line}: a command ending in & needs a "docs-test: background: URL" marker before its block`,
      );
    }
    return [...block];
  }
  if (servers.length !== marker.urls.length) {
    problems.push(
      `${block[0]?.file}:${pending?.line}: the block starts ${servers.length} server(s) with & but its marker lists ${marker.urls.length} URL(s)`,
    );
  }
  const urls = [...marker.urls];
  return block.map((command) => {
    const readyUrl = startsInBackground(command.command) ? urls.shift() : undefined;
    return { ...command, withServers: true, ...(readyUrl ? { readyUrl } : {}) };
  });
}

/** A command bash runs in the background: its last line ends in a single `&` (before any comment). */
export function startsInBackground(command: string): boolean {
  const last = command.split('\n').at(-1) ?? '';
  return /(^|[^&])&\s*(#.*)?$/.test(last);
}

/** The block's commands: `\` continuations joined, blank lines and whole-line comments dropped. */
function blockCommands(body: readonly string[], firstLine: number): { line: number; command: string }[] {
  const out: { line: number; command: string }[] = [];
  let current: string[] = [];
  let start = firstLine;
  body.forEach((raw, offset) => {
    const text = raw.trimEnd();
    if (current.length === 0) {
      if (text.trim() === '' || text.trim().startsWith('#')) return;
      start = firstLine + offset;
    }
    if (text.endsWith('\\')) {
      current.push(text);
      return;
    }
    current.push(text);
    out.push({ line: start, command: current.join('\n').trim() });
    current = [];
  });
  if (current.length > 0) out.push({ line: start, command: current.join('\n').trim() });
  return out;
}

/**
 * Each `edgerl` invocation in a command: the words after `edgerl` up to the next shell operator, split
 * on spaces outside quotes (enough for the docs; quoted arguments stay one word, quotes kept).
 */
export function edgerlInvocations(command: string): string[][] {
  const words = command.replace(/\\\n/g, ' ').match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  const operators = new Set(['&&', '||', '|', ';', '>', '>>', '2>&1', '<']);
  const out: string[][] = [];
  for (let index = 0; index < words.length; index++) {
    if (words[index] !== 'edgerl') continue;
    const args: string[] = [];
    for (let next = index + 1; next < words.length; next++) {
      const word = words[next] ?? '';
      if (operators.has(word) || word.startsWith('#')) break;
      args.push(word);
    }
    out.push(args);
  }
  return out;
}
