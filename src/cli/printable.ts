/**
 * Text from records (payloads, keys, reasons quoting them) as a terminal may show it: control characters (ESC starts
 * sequences that retitle the window, clear the screen, or worse) are written as visible `\u001b`-style escapes.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what must be found
const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

export function printable(text: string): string {
  return text.replace(control, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A URL with its credentials masked, for a log line. */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = '***';
    parsed.password = '';
    return parsed.href;
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//***@');
  }
}
