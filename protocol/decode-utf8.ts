// Strict UTF-8 decoding for bodies and files the edge and `edgerl import` read: a malformed byte is
// refused with its offset instead of being replaced with U+FFFD (which would store text the sender
// never wrote). Pure and Worker-safe. Lone surrogates written as JSON escapes (`\ud800`) are valid
// UTF-8 text and not this file's concern (protocol/stored-text.ts keeps them).

/** Bytes that are not UTF-8; `offset` is the 0-based position of the first byte of the bad sequence. */
export class Utf8Error extends Error {
  override readonly name = 'Utf8Error';
  readonly code = 'invalid-encoding';
  readonly offset: number;

  constructor(offset: number) {
    super(`invalid UTF-8 at byte ${offset}`);
    this.offset = offset;
  }
}

const fatal = new TextDecoder('utf-8', { fatal: true });

/** The text of `bytes` (a leading BOM dropped, as TextDecoder does); throws Utf8Error at the first bad byte. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return fatal.decode(bytes);
  } catch {
    throw new Utf8Error(invalidUtf8Offset(bytes) ?? bytes.length);
  }
}

/**
 * Where the first ill-formed sequence starts, by the well-formed byte sequences of the Unicode
 * Standard, Table 3-7 (the ones TextDecoder's fatal mode accepts); undefined when there is none. A
 * sequence cut off by the end of `bytes` counts as ill-formed.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number | undefined {
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at] as number;
    if (lead < 0x80) {
      at += 1;
      continue;
    }
    // The continuation bytes a lead byte takes, and the range of the first of them (Table 3-7).
    const [count, low, high] =
      lead >= 0xc2 && lead <= 0xdf
        ? [1, 0x80, 0xbf]
        : lead === 0xe0
          ? [2, 0xa0, 0xbf]
          : (lead >= 0xe1 && lead <= 0xec) || lead === 0xee || lead === 0xef
            ? [2, 0x80, 0xbf]
            : lead === 0xed
              ? [2, 0x80, 0x9f]
              : lead === 0xf0
                ? [3, 0x90, 0xbf]
                : lead >= 0xf1 && lead <= 0xf3
                  ? [3, 0x80, 0xbf]
                  : lead === 0xf4
                    ? [3, 0x80, 0x8f]
                    : [0, 0, 0];
    if (count === 0 || at + count >= bytes.length) return at;
    for (let next = 1; next <= count; next++) {
      const byte = bytes[at + next] as number;
      const [min, max] = next === 1 ? [low, high] : [0x80, 0xbf];
      if (byte < min || byte > max) return at;
    }
    at += count + 1;
  }
  return undefined;
}
