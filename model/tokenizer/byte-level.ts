// The byte-level alphabet of GPT-2-style BPE: every byte gets one printable character, so a BPE
// vocabulary over these characters can spell any UTF-8 text. Leaves out pre-tokenization and merges.
//
// Mapping from GPT-2's `bytes_to_unicode` (openai/gpt-2, src/encoder.py), which Hugging Face's
// ByteLevel pre-tokenizer/decoder and Qwen2's tokenizer.json use: bytes that are printable Latin-1
// ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves; the other 68 bytes (controls, space, 0x7F-0xA0,
// 0xAD) map in byte order to U+0100, U+0101, … (so the space 0x20 is 'Ġ' and '\n' is 'Ċ').

function isPrintableLatin1(byte: number): boolean {
  return (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
}

function buildByteToChar(): readonly string[] {
  const chars: string[] = [];
  let shifted = 0;
  for (let byte = 0; byte < 256; byte++) {
    chars.push(String.fromCharCode(isPrintableLatin1(byte) ? byte : 256 + shifted++));
  }
  return chars;
}

/** `byteToChar[b]` is the character that stands for byte `b` in byte-level token strings. */
export const byteToChar: readonly string[] = buildByteToChar();

const charToByte = new Map<string, number>(byteToChar.map((char, byte) => [char, byte]));

/** The byte-level spelling of UTF-8 text (what the ByteLevel pre-tokenizer produces). */
export function toByteLevel(text: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(text)) out += byteToChar[byte];
  return out;
}

/** The bytes a byte-level token string stands for, or undefined when it has a character outside the alphabet. */
export function byteLevelToBytes(token: string): Uint8Array | undefined {
  const bytes = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i++) {
    const byte = charToByte.get(token.charAt(i));
    if (byte === undefined) return undefined;
    bytes[i] = byte;
  }
  return bytes;
}
