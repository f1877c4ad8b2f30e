// The syntax of a JSON Schema `pattern` (ECMA-262, read with the `u` flag as JSON Schema validators do)
// in the regular subset guided decoding follows, parsed into a tree of ASCII character sets; the DFA is
// json-string-pattern.ts. Characters outside ASCII give empty sets: they are never written. Anything
// outside the subset (lookaround, backreferences, word boundaries, anchors in the middle) throws a
// PatternProblem naming it and where it is.

export class PatternProblem extends Error {}

export type CharSet = Uint8Array; // [128]: 1 where the ASCII code is in the set
export type Regex =
  | { readonly t: 'set'; readonly set: CharSet }
  | { readonly t: 'seq'; readonly items: readonly Regex[] }
  | { readonly t: 'alt'; readonly options: readonly Regex[] }
  | { readonly t: 'repeat'; readonly item: Regex; readonly min: number; readonly max: number };

const setOf = (test: (code: number) => boolean): CharSet => {
  const set = new Uint8Array(128);
  for (let code = 0; code < 128; code++) if (test(code)) set[code] = 1;
  return set;
};
const isDigitCode = (code: number) => code >= 0x30 && code <= 0x39;
const isWordCode = (code: number) =>
  isDigitCode(code) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
// ECMA-262 WhiteSpace and LineTerminator, restricted to ASCII.
const isSpaceCode = (code: number) => code === 0x20 || (code >= 0x09 && code <= 0x0d);
const classEscapes: Record<string, (code: number) => boolean> = {
  d: isDigitCode,
  D: (code) => !isDigitCode(code),
  w: isWordCode,
  W: (code) => !isWordCode(code),
  s: isSpaceCode,
  S: (code) => !isSpaceCode(code),
};
const controlEscapes: Record<string, number> = { t: 0x09, n: 0x0a, r: 0x0d, v: 0x0b, f: 0x0c, '0': 0 };
const syntaxCharacters = '^$\\.*+?()[]{}|/-';

class Parser {
  private at = 0;
  constructor(private readonly source: string) {}

  parse(): Regex {
    const anchoredStart = this.source.startsWith('^');
    if (anchoredStart) this.at = 1;
    const body = this.alternation(true);
    if (this.at < this.source.length) this.fail(`unexpected "${this.source[this.at]}"`);
    const anchoredEnd = this.endAnchored;
    if (this.topAlternation && (anchoredStart || anchoredEnd)) {
      // `^a|b` anchors only its first option; a group says which is meant.
      this.fail('"|" beside "^" or "$" must be inside a group, as in ^(a|b)$');
    }
    const any: Regex = { t: 'repeat', item: { t: 'set', set: setOf(() => true) }, min: 0, max: Infinity };
    return { t: 'seq', items: [...(anchoredStart ? [] : [any]), body, ...(anchoredEnd ? [] : [any])] };
  }

  private endAnchored = false;
  private topAlternation = false;

  private fail(message: string): never {
    throw new PatternProblem(`${message} at character ${this.at} of the pattern`);
  }

  private alternation(top: boolean): Regex {
    const options = [this.sequence(top)];
    while (this.source[this.at] === '|') {
      this.at++;
      options.push(this.sequence(top));
    }
    if (top && options.length > 1) this.topAlternation = true;
    return options.length === 1 ? (options[0] as Regex) : { t: 'alt', options };
  }

  private sequence(top: boolean): Regex {
    const items: Regex[] = [];
    for (;;) {
      const char = this.source[this.at];
      if (char === undefined || char === '|' || char === ')') break;
      if (char === '$') {
        // Only as the pattern's last character, where it anchors the whole match.
        if (!top || this.at !== this.source.length - 1) this.fail('"$" is supported only at the end');
        this.endAnchored = true;
        this.at++;
        break;
      }
      if (char === '^') this.fail('"^" is supported only at the start');
      items.push(this.quantified(this.atom()));
    }
    return items.length === 1 ? (items[0] as Regex) : { t: 'seq', items };
  }

  private quantified(item: Regex): Regex {
    let result = item;
    for (;;) {
      const char = this.source[this.at];
      let min: number;
      let max: number;
      if (char === '*') [min, max] = [0, Infinity];
      else if (char === '+') [min, max] = [1, Infinity];
      else if (char === '?') [min, max] = [0, 1];
      else if (char === '{') {
        const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at));
        if (!match) this.fail('"{" must start a quantifier {n}, {n,} or {n,m}');
        min = Number(match[1]);
        max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
        if (min > max) this.fail('a quantifier {n,m} needs n <= m');
        if (Math.max(min, max === Infinity ? 0 : max) > 1000) this.fail('quantifier bounds above 1000');
        this.at += match[0].length - 1;
      } else return result;
      this.at++;
      if (this.source[this.at] === '?') this.at++; // lazy: same language
      result = { t: 'repeat', item: result, min, max };
    }
  }

  private atom(): Regex {
    const char = this.source[this.at] as string;
    if (char === '(') {
      this.at++;
      if (this.source.startsWith('?:', this.at)) this.at += 2;
      else if (this.source.startsWith('?<', this.at) && !/^\?<[=!]/.test(this.source.slice(this.at))) {
        const close = this.source.indexOf('>', this.at);
        if (close === -1) this.fail('unclosed group name');
        this.at = close + 1;
      } else if (this.source[this.at] === '?') this.fail('lookahead and lookbehind are not supported');
      const inner = this.alternation(false);
      if (this.source[this.at] !== ')') this.fail('unclosed "("');
      this.at++;
      return inner;
    }
    if (char === '[') return { t: 'set', set: this.charClass() };
    if (char === '.') {
      this.at++;
      return { t: 'set', set: setOf((code) => code !== 0x0a && code !== 0x0d) };
    }
    if ('*+?{'.includes(char)) this.fail(`nothing to repeat before "${char}"`);
    if (char === ']' || char === '}') this.fail(`a lone "${char}" must be escaped`);
    if (char === '\\') return { t: 'set', set: this.escape(false) };
    this.at++;
    return { t: 'set', set: single(char.codePointAt(0) as number) };
  }

  /** After a `\`: the set it stands for. */
  private escape(inClass: boolean): CharSet {
    this.at++;
    const char = this.source[this.at];
    if (char === undefined) this.fail('the pattern ends in "\\"');
    this.at++;
    const test = classEscapes[char];
    if (test) return setOf(test);
    const control = controlEscapes[char];
    if (control !== undefined && !(char === '0' && isDigitCode(this.source.charCodeAt(this.at))))
      return single(control);
    if (char === 'x' || char === 'u') {
      const digits = char === 'x' ? 2 : 4;
      const hex = this.source.slice(this.at, this.at + digits);
      if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(hex))
        this.fail(`"\\${char}" needs ${digits} hex digits`);
      this.at += digits;
      return single(Number.parseInt(hex, 16));
    }
    if (char === 'b' && inClass) return single(0x08);
    if (syntaxCharacters.includes(char) || (inClass && char === ']')) return single(char.charCodeAt(0));
    if (char === 'b' || char === 'B') this.fail('word boundaries (\\b, \\B) are not supported');
    if (/[1-9k]/.test(char)) this.fail('backreferences are not supported');
    return this.fail(`the escape "\\${char}" is not supported`);
  }

  private charClass(): CharSet {
    this.at++;
    const negated = this.source[this.at] === '^';
    if (negated) this.at++;
    const set = new Uint8Array(128);
    let first = true;
    for (;;) {
      const char = this.source[this.at];
      if (char === undefined) this.fail('unclosed "["');
      if (char === ']' && !first) break;
      first = false;
      const low = this.classAtom();
      if (
        this.source[this.at] === '-' &&
        this.source[this.at + 1] !== ']' &&
        this.source[this.at + 1] !== undefined
      ) {
        this.at++;
        const high = this.classAtom();
        const from = singleCode(low);
        const to = singleCode(high);
        if (from === undefined || to === undefined) this.fail('a range must join two single characters');
        if (from > to) this.fail('a range out of order');
        for (let code = from; code <= Math.min(to, 127); code++) set[code] = 1;
      } else {
        for (let code = 0; code < 128; code++) if (low[code]) set[code] = 1;
      }
    }
    this.at++;
    return negated ? setOf((code) => set[code] === 0) : set;
  }

  private classAtom(): CharSet {
    const char = this.source[this.at] as string;
    if (char === '\\') return this.escape(true);
    this.at++;
    return single(char.codePointAt(0) as number);
  }
}

/** A one-character set; characters outside ASCII give the empty set (they are never written). */
function single(code: number): CharSet {
  const set = new Uint8Array(128);
  if (code < 128) set[code] = 1;
  // Mark it so a range can still be read from it.
  singles.set(set, code);
  return set;
}
const singles = new WeakMap<CharSet, number>();
const singleCode = (set: CharSet) => singles.get(set);

/** The tree of `source`: an unanchored side matches anything there (JSON Schema patterns are not anchored). */
export function parsePattern(source: string): Regex {
  return new Parser(source).parse();
}
