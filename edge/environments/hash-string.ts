// A stable 32-bit string hash, used to put each task in the train or the eval split for good.

/** FNV-1a, 32-bit (Fowler, Noll, Vo; offset basis 2166136261, prime 16777619), over UTF-16 code units. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
