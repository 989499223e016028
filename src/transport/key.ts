/**
 * Record keys are bytes on the wire; the library keeps them as text where it can. Text is used only when the bytes
 * round-trip exactly through UTF-8 and hold no NUL (which PostgreSQL text cannot store); otherwise the bytes are kept
 * and sent as they came, so a forwarded or redriven record lands on the same partition as the original.
 */
export function keyText(key: Buffer | null): string | null {
  if (key === null) return null;
  const text = key.toString('utf8');
  return !text.includes('\u0000') && Buffer.from(text, 'utf8').equals(key) ? text : null;
}

/** The key to send again: its text when lossless, else its bytes. */
export function keyToSend(key: Buffer | null): string | Buffer | null {
  if (key === null) return null;
  return keyText(key) ?? key;
}

/** A stable text form of any key for lookups in tables (key-ordered holds): base64 of the bytes. */
export function keyId(key: Buffer): string {
  return key.toString('base64');
}
