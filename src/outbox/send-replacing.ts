import { errorFields, type Logger } from '../observability/logger.ts';
import type { Producer } from '../transport/port.ts';
import type { ProducerSlot } from './producer-slot.ts';
import { classifySendFailure } from './refusal.ts';

/**
 * Sends through the slot's current producer; one that failed fatally (fenced, librdkafka's fatal state) is replaced
 * through `producerFactory` and the send tried again, up to three times. Any other failure is the caller's.
 */
export async function sendReplacing(
  producers: ProducerSlot,
  logger: Logger,
  send: (producer: Producer) => Promise<void>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const producer = producers.current();
    try {
      await send(producer);
      return;
    } catch (error) {
      if (classifySendFailure(error).failure !== 'fatal' || attempt >= 3) throw error;
      logger.warn('relay producer failed fatally; replacing it', errorFields(error));
      if (!(await producers.replace(producer, true))) throw error;
    }
  }
}
