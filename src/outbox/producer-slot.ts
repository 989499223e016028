import { invalidOptions } from '../errors.ts';
import { within } from '../lifecycle.ts';
import { errorFields, type Logger } from '../observability/logger.ts';
import type { Producer } from '../transport/port.ts';

export interface ProducerSource {
  producer?: Producer | undefined;
  producerFactory?: (() => Producer) | undefined;
}

/** The relay's producer, replaced through the factory when it fails fatally (fenced, librdkafka's fatal error). */
export interface ProducerSlot {
  current(): Producer;
  /**
   * Replaces `failed` (unless already replaced) by a new, connected producer; false when there is no factory.
   * `fatal`: it failed for good (logged when it cannot be replaced); otherwise only its state is suspect.
   */
  replace(failed: Producer, fatal: boolean): Promise<boolean>;
  close(): Promise<void>;
}

export function producerSlot(source: ProducerSource, logger: Logger): ProducerSlot {
  const { producerFactory } = source;
  if (source.producer === undefined && producerFactory === undefined) {
    throw invalidOptions('producerFactory', 'give `producerFactory` (or a `producer`)');
  }
  let producer = source.producer ?? producerFactory!();
  let warned = false;
  return {
    current: () => producer,
    async replace(failed, fatal) {
      if (failed !== producer) return true;
      if (!producerFactory) {
        if (fatal && !warned) {
          logger.error('relay producer failed fatally and the relay has no producerFactory to replace it');
        }
        warned ||= fatal;
        return false;
      }
      producer = producerFactory();
      // The failed client may hang on its way out; it is no longer used either way.
      void within(
        failed.close().catch((error: unknown) => logger.warn('closing a failed relay producer', errorFields(error))),
        10_000,
      );
      await producer.connect();
      return true;
    },
    close: () => producer.close(),
  };
}
