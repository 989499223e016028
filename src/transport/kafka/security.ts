/**
 * TLS and SASL for the Kafka clients: the typed `ssl` and `sasl` options of `kafkaTransport` (and `createPipeline`),
 * turned into the client's settings for every client a transport makes (producers, consumers, the admin). Secrets
 * (passwords, keys, tokens) go to the client only: nothing here logs them or puts them in an error.
 */
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

/** TLS to the brokers. `true`: the system's certificate authorities. */
export type KafkaSsl =
  | boolean
  | {
      /** PEM certificate(s) of the authority that signed the brokers' certificates (default: the system's). */
      ca?: string;
      /** PEM client certificate, for brokers that ask for one (`ssl.client.auth=required`), with its `key`. */
      certificate?: string;
      /** PEM private key of `certificate`. */
      key?: string;
      /** Password of an encrypted `key`. */
      keyPassword?: string;
      /**
       * Check the broker's certificate and that it names the host connected to (default true). `false` is for a test
       * cluster only: anyone on the path can then read and change the traffic.
       */
      verify?: boolean;
    };

/** What an OAuth bearer token provider returns. */
export interface KafkaOAuthToken {
  /** The token (a JWT for most brokers). */
  value: string;
  /** Who the token is for, as the broker will see it. */
  principal: string;
  /** When it expires, in ms since the epoch; the client asks for a new one before then. */
  lifetime: number;
  /** SASL extensions, if your broker wants some. */
  extensions?: Record<string, string>;
}

/** SASL authentication. Over a network you do not own, use it with `ssl` (SASL_SSL): SASL alone is not encrypted. */
export type KafkaSasl =
  | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  | {
      mechanism: 'oauthbearer';
      /** Called for the first token and before each one expires (fetch it from your identity provider). */
      token: () => Promise<KafkaOAuthToken>;
    };

export interface KafkaSecurity {
  ssl?: KafkaSsl;
  sasl?: KafkaSasl;
}

function invalid(field: string, message: string): EffectivelyError {
  return new EffectivelyError(ErrorCodes.EFF_INVALID_OPTIONS, `kafkaTransport: ${field} ${message}`, {
    details: { field },
  });
}

/** Throws `EFF_INVALID_OPTIONS` naming the field (never its value: it may be a secret). */
export function validateKafkaSecurity({ ssl, sasl }: KafkaSecurity): void {
  if (ssl !== undefined && typeof ssl !== 'boolean') {
    if (typeof ssl !== 'object' || ssl === null) throw invalid('ssl', 'must be true, false or an object');
    for (const field of ['ca', 'certificate', 'key', 'keyPassword'] as const) {
      if (ssl[field] !== undefined && typeof ssl[field] !== 'string') throw invalid(`ssl.${field}`, 'must be a string');
    }
    if ((ssl.certificate === undefined) !== (ssl.key === undefined)) {
      throw invalid('ssl.certificate', 'and ssl.key go together (a client certificate needs its key)');
    }
    if (ssl.verify !== undefined && typeof ssl.verify !== 'boolean') throw invalid('ssl.verify', 'must be a boolean');
  }
  if (sasl === undefined) return;
  const mechanisms = ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'];
  if (typeof sasl !== 'object' || sasl === null || !mechanisms.includes(sasl.mechanism)) {
    throw invalid('sasl.mechanism', `must be one of ${mechanisms.join(', ')}`);
  }
  if (sasl.mechanism === 'oauthbearer') {
    if (typeof sasl.token !== 'function') throw invalid('sasl.token', 'must be a function returning a token');
    return;
  }
  if (typeof sasl.username !== 'string' || sasl.username === '') {
    throw invalid('sasl.username', 'must be a non-empty string');
  }
  if (typeof sasl.password !== 'string' || sasl.password === '') {
    throw invalid('sasl.password', 'must be a non-empty string');
  }
}

/**
 * The client settings for `security`: the `kafkaJS` block's `ssl` and `sasl`, and the librdkafka properties the
 * `kafkaJS` block has no room for (certificates, verification), set on the client so every producer, consumer and
 * admin it makes has them.
 */
export function kafkaSecurityConfig({ ssl, sasl }: KafkaSecurity): {
  kafkaJS: Record<string, unknown>;
  rdkafka: Record<string, string | boolean>;
} {
  const kafkaJS: Record<string, unknown> = {};
  const rdkafka: Record<string, string | boolean> = {};
  if (ssl) {
    kafkaJS.ssl = true;
    if (typeof ssl === 'object') {
      if (ssl.ca !== undefined) rdkafka['ssl.ca.pem'] = ssl.ca;
      if (ssl.certificate !== undefined) rdkafka['ssl.certificate.pem'] = ssl.certificate;
      if (ssl.key !== undefined) rdkafka['ssl.key.pem'] = ssl.key;
      if (ssl.keyPassword !== undefined) rdkafka['ssl.key.password'] = ssl.keyPassword;
      if (ssl.verify === false) {
        rdkafka['enable.ssl.certificate.verification'] = false;
        rdkafka['ssl.endpoint.identification.algorithm'] = 'none';
      }
    }
  }
  if (sasl?.mechanism === 'oauthbearer') {
    const { token } = sasl;
    kafkaJS.sasl = { mechanism: 'oauthbearer', oauthBearerProvider: () => token() };
  } else if (sasl) {
    kafkaJS.sasl = { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password };
  }
  return { kafkaJS, rdkafka };
}
