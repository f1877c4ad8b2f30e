// The links of a markdown file and the anchors its headings make, for checking that the docs point at
// files and sections that exist. Pure. Leaves out reference-style links (the docs use none) and
// absolute URLs (checking those needs the network).

export interface DocLink {
  /** 1-based line of the link. */
  readonly line: number;
  /** The path part ('' for a link within the same file). */
  readonly path: string;
  /** The part after `#`, if any. */
  readonly anchor?: string;
}

/** Inline links `[text](target)` outside code, other than absolute URLs. */
export function relativeLinks(markdown: string): DocLink[] {
  const out: DocLink[] = [];
  withoutCode(markdown).forEach((text, index) => {
    for (const match of text.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      const path = hash === -1 ? target : target.slice(0, hash);
      const anchor = hash === -1 ? undefined : target.slice(hash + 1);
      out.push({ line: index + 1, path, ...(anchor === undefined ? {} : { anchor }) });
    }
  });
  return out;
}

/** Top-level folders of the repository: a code span starting with one of them names a path in it. */
const repositoryFolders = [
  'protocol',
  'db',
  'model',
  'serve',
  'experiments',
  'console',
  'edge',
  'trainer',
  'cli',
  'test',
  'bench',
  'scripts',
  'bin',
  '.ci',
];

/**
 * Paths the text names in code spans outside fenced blocks (`edge/routing/resolve-route.ts`), other than
 * templates such as `checkpoints/{step:04d}/` or `<output-dir>/…`.
 */
export function repositoryPaths(markdown: string): string[] {
  const out: string[] = [];
  for (const text of withoutCode(markdown, { keepInlineCode: true })) {
    for (const match of text.matchAll(/`([^`\s]+)`/g)) {
      const path = match[1] ?? '';
      if (!repositoryFolders.some((folder) => path.startsWith(`${folder}/`))) continue;
      if (/[{}<>…]/.test(path)) continue;
      out.push(path);
    }
  }
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to `-`, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const text of withoutCode(markdown, { keepInlineCode: true })) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = (heading[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The file's lines with fenced blocks blanked and inline code spans removed (line numbers kept). */
function withoutCode(markdown: string, options: { keepInlineCode?: boolean } = {}): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((text) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence !== undefined) {
      if (marker?.startsWith(fence)) fence = undefined;
      return '';
    }
    if (marker) {
      fence = marker;
      return '';
    }
    return options.keepInlineCode ? text : text.replace(/`+[^`]*`+/g, '');
  });
}
