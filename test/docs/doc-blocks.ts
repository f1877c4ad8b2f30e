// Reads the shell commands out of the docs: every line of every ```sh / ```bash block, with `\`
// continuations joined and comments and blank lines dropped, and the block's skip marker if it has one
// (`<!-- docs-test: skip: reason -->` on the line before the fence). Pure: text in, commands out.

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
}

export interface DocBlocks {
  readonly commands: DocCommand[];
  /** Markers that say nothing, name no known directive, or stand before no shell block. */
  readonly problems: string[];
}

export function extractCommands(file: string, markdown: string): DocBlocks {
  const lines = markdown.split('\n');
  const commands: DocCommand[] = [];
  const problems: string[] = [];
  let pendingSkip: { reason: string; line: number } | undefined;
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index] ?? '';
    const marker = markerPattern.exec(text.trim());
    if (marker) {
      if (pendingSkip) problems.push(`${file}:${pendingSkip.line}: marker not followed by a sh/bash block`);
      const directive = /^\s*skip:\s*(.*?)\s*$/.exec(marker[1] ?? '');
      if (!directive) {
        problems.push(`${file}:${index + 1}: unknown docs-test directive (write "docs-test: skip: REASON")`);
      } else if (!directive[1]) {
        problems.push(`${file}:${index + 1}: a skip marker needs its reason`);
      } else {
        pendingSkip = { reason: directive[1], line: index + 1 };
      }
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(text);
    if (!fence) {
      if (pendingSkip && text.trim() !== '') {
        problems.push(`${file}:${pendingSkip.line}: marker not followed by a sh/bash block`);
        pendingSkip = undefined;
      }
      continue;
    }
    const language = (fence[3] ?? '').toLowerCase();
    const close = fence[2] ?? '```';
    let end = index + 1;
    while (end < lines.length && !(lines[end] ?? '').trim().startsWith(close)) end++;
    const body = lines.slice(index + 1, end);
    if (runLanguages.has(language)) {
      for (const command of blockCommands(body, index + 2)) {
        commands.push({ file, ...command, ...(pendingSkip ? { skip: pendingSkip.reason } : {}) });
      }
    } else {
      if (otherShellLanguages.has(language)) {
        problems.push(
          `${file}:${index + 1}: a \`${language}\` block: write sh or bash so the docs test runs it`,
        );
      }
      if (pendingSkip) problems.push(`${file}:${pendingSkip.line}: marker not followed by a sh/bash block`);
    }
    pendingSkip = undefined;
    index = end;
  }
  if (pendingSkip) problems.push(`${file}:${pendingSkip.line}: marker not followed by a sh/bash block`);
  return { commands, problems };
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
