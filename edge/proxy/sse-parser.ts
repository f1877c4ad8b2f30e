// Splits a server-sent event stream (WHATWG HTML, "Server-sent events": events end at a blank line,
// `data:` lines join with newlines, comments start with a colon) into events as text arrives in
// arbitrary pieces. Pure.

export interface SseEvent {
  readonly event?: string;
  readonly data: string;
  /** The event's lines as received, to pass it on unchanged. */
  readonly raw: string;
}

export class SseParser {
  #buffer = '';
  /** The last piece ended in CR: a LF starting the next piece belongs to the same line break. */
  #afterCr = false;

  /** The events completed by this piece of text. */
  push(text: string): SseEvent[] {
    const piece = this.#afterCr && text.startsWith('\n') ? text.slice(1) : text;
    this.#afterCr = piece.endsWith('\r');
    this.#buffer += piece.replace(/\r\n?/g, '\n');
    const events: SseEvent[] = [];
    for (let end = this.#buffer.indexOf('\n\n'); end >= 0; end = this.#buffer.indexOf('\n\n')) {
      const raw = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      const event = parse(raw);
      if (event) events.push(event);
    }
    return events;
  }

  /** What is left when the stream ends without a final blank line. */
  flush(): SseEvent[] {
    const raw = this.#buffer;
    this.#buffer = '';
    const event = raw.trim() === '' ? undefined : parse(raw);
    return event ? [event] : [];
  }
}

function parse(raw: string): SseEvent | undefined {
  const data: string[] = [];
  let event: string | undefined;
  for (const line of raw.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
  }
  if (data.length === 0 && event === undefined) return undefined;
  return { ...(event !== undefined ? { event } : {}), data: data.join('\n'), raw };
}
