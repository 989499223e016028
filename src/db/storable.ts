/**
 * What goes into a text or jsonb column from outside (a reason quoting a hostile header, a header's name) may hold
 * what PostgreSQL refuses there: NUL (22021 in text, 22P05 in jsonb) or a lone UTF-16 surrogate (not encodable as
 * UTF-8). A failure to record a failure must never happen, so such text is made storable here, once.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what must be found
const nul = /\u0000/g;
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Readable text a text column accepts: NUL written as `\0`, a lone surrogate as U+FFFD. */
export function storableText(text: string): string {
  return text.replace(nul, '\\0').replace(loneSurrogate, '\uFFFD');
}

/** Whether `text` can be stored as is (in text, and as a jsonb key or string). */
export function isStorable(text: string): boolean {
  nul.lastIndex = 0;
  loneSurrogate.lastIndex = 0;
  return !nul.test(text) && !loneSurrogate.test(text);
}

/** Marks a header name kept as base64 of its UTF-8 bytes (a name jsonb cannot hold, or one starting with the mark). */
const encodedName = '\u0001b64:';

/**
 * Headers as kept in a jsonb column: values as base64 (bytes are bytes), names as they are, except a name jsonb
 * cannot hold (NUL, a lone surrogate) or one that starts with the mark, which is kept as the mark + base64 of its bytes.
 */
export function encodeHeaders(headers: Record<string, string | Buffer>): string {
  const encoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key =
      isStorable(name) && !name.startsWith(encodedName)
        ? name
        : encodedName + Buffer.from(name, 'utf8').toString('base64');
    encoded[key] = (typeof value === 'string' ? Buffer.from(value) : value).toString('base64');
  }
  return JSON.stringify(encoded);
}

/** The headers `encodeHeaders` kept, with their names and bytes as they came. */
export function decodeHeaders(stored: Record<string, string> | null | undefined): Record<string, Buffer> {
  const headers: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(stored ?? {})) {
    const name = key.startsWith(encodedName)
      ? Buffer.from(key.slice(encodedName.length), 'base64').toString('utf8')
      : key;
    headers[name] = Buffer.from(value, 'base64');
  }
  return headers;
}
