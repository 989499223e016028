// A broker that refuses the login (a wrong SASL password, an expired token) or the TLS handshake (an unknown
// authority, a host name the certificate does not name) looks, to the client's calls, like no broker at all: they time
// out. Only the client's log says why. The transport notes those lines, so its "nobody answered" error can say
// "refused" instead, with the broker's reason (never a credential: the client's lines carry none).
import type { ClientLogger } from './log.ts';

const refusal =
  /SASL authentication error|Authentication failed|SSL handshake failed|certificate verify failed|SSL_CTX|ssl\.ca|SASL.*(?:mechanism|failed)/i;

/** How long a noted refusal explains a later timeout. */
const rememberMs = 60_000;

export interface ConnectionRefusals {
  /** The last refusal the client logged within the last minute (its text, without the thread prefix). */
  recent(): string | undefined;
}

/** Wraps the client's logger so that refusal lines (seen at every level the client sends) are noted. */
export function noticingRefusals(logger: ClientLogger): { logger: ClientLogger; refusals: ConnectionRefusals } {
  let last: { text: string; at: number } | undefined;
  const note = (message: string) => {
    if (refusal.test(message)) last = { text: message.replace(/^\[thrd:[^\]]*\]:\s*/, ''), at: Date.now() };
  };
  const noting =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, extra?: object): void => {
      note(message);
      logger[level](message, extra);
    };
  const wrapped: ClientLogger = {
    debug: noting('debug'),
    info: noting('info'),
    warn: noting('warn'),
    error: noting('error'),
    namespace: () => wrapped,
    setLogLevel: (level) => logger.setLogLevel(level),
  };
  return {
    logger: wrapped,
    refusals: { recent: () => (last && Date.now() - last.at < rememberMs ? last.text : undefined) },
  };
}
