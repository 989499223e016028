/**
 * A walk over an Avro payload with its writer's type, before `avsc` decodes it: it reads every length, count and
 * branch and checks each against the bytes that are there, building no value. `avsc` trusts an array's or a map's
 * block count: six bytes saying 4,000,000,000 items made it loop (and allocate) that many times whatever the payload
 * held, minutes of one core for one record (measured: 10,000,000 empty records, 2 bytes of payload, ~1 s; items of
 * an `int`, 82 ms before it found the buffer short). Here a count of items that take bytes cannot pass the payload's
 * end, and items that take none (`null`, a record of no fields, `fixed` of size 0) count against `maxEmptyItems`.
 */

/** The part of an `avsc` type this walk reads (avsc 5's public fields). */
interface AvroType {
  typeName: string;
  itemsType?: AvroType;
  valuesType?: AvroType;
  fields?: { type: AvroType }[];
  types?: AvroType[];
  size?: number;
  symbols?: string[];
  underlyingType?: AvroType;
}

export class AvroBoundsError extends Error {}

/** A type this walk does not know (none in avsc 5 today): the check stands aside rather than refuse a good payload. */
class UnknownType extends Error {}

/** Items of no bytes (an array of `null`s) one payload may hold: a real one has a few; six bytes could say billions. */
export const maxEmptyItems = 1_000_000;

const fixedWidth: Record<string, number> = { float: 4, double: 8 };

/** Whether `type`'s encoding can take no bytes at all (recursion counts as taking some: it goes through a count). */
function empty(type: AvroType, seen = new Set<AvroType>()): boolean {
  if (type.underlyingType) return empty(type.underlyingType, seen);
  switch (type.typeName) {
    case 'null':
      return true;
    case 'fixed':
      return type.size === 0;
    case 'record':
    case 'error': {
      if (seen.has(type)) return false;
      seen.add(type);
      return (type.fields ?? []).every((field) => empty(field.type, seen));
    }
    default:
      return false;
  }
}

/**
 * Throws `AvroBoundsError` where `payload` cannot hold what it says; returns the bytes the value took, or undefined
 * when the writer's type holds a kind this walk does not know (then `avsc` alone reads it, as before).
 */
export function checkAvroBounds(type: AvroType, payload: Uint8Array): number | undefined {
  let pos = 0;
  let emptyItems = 0;
  const emptyCache = new Map<AvroType, boolean>();
  const isEmpty = (t: AvroType) => {
    const known = emptyCache.get(t);
    if (known !== undefined) return known;
    const found = empty(t);
    emptyCache.set(t, found);
    return found;
  };
  const need = (bytes: number) => {
    if (!(bytes >= 0) || pos + bytes > payload.length)
      throw new AvroBoundsError(`truncated: ${bytes} bytes wanted at ${pos} of ${payload.length}`);
    pos += bytes;
  };
  /** A zig-zag varint as a JavaScript number (exact to 2^53; larger counts and lengths fail the checks anyway). */
  const long = (): number => {
    let result = 0;
    let scale = 1;
    for (let shift = 0; shift < 70; shift += 7) {
      need(1);
      const byte = payload[pos - 1]!;
      result += (byte & 0x7f) * scale;
      scale *= 128;
      if ((byte & 0x80) === 0) return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
    }
    throw new AvroBoundsError('a varint longer than 10 bytes');
  };
  /**
   * Array and map blocks: a count (negative: followed by the block's size in bytes), then that many items. A block's
   * size must be what its items take: avsc jumps over it by the size where a reader drops the field (`_skip`), and reads
   * the items where it keeps it; a size that differs would have it read bytes this walk never checked (or, negative,
   * jump back and read the same block for ever).
   */
  const blocks = (item: () => void, itemEmpty: boolean) => {
    for (let count = long(); count !== 0; count = long()) {
      let size: number | undefined;
      if (count < 0) {
        count = -count;
        size = long();
        if (size < 0 || size > payload.length - pos)
          throw new AvroBoundsError(`a block of ${size} bytes with ${payload.length - pos} left`);
      }
      const from = pos;
      if (itemEmpty) {
        emptyItems += count;
        if (emptyItems > maxEmptyItems)
          throw new AvroBoundsError(`more than ${maxEmptyItems} items of no bytes (a block says ${count})`);
      } else if (count > payload.length - pos) {
        throw new AvroBoundsError(`a block of ${count} items in ${payload.length - pos} bytes`);
      }
      for (let i = 0; i < count; i++) item();
      if (size !== undefined && pos - from !== size)
        throw new AvroBoundsError(`a block said to take ${size} bytes whose items take ${pos - from}`);
    }
  };
  const walk = (t: AvroType): void => {
    if (t.underlyingType) {
      walk(t.underlyingType);
      return;
    }
    switch (t.typeName) {
      case 'null':
        break;
      case 'boolean':
        need(1);
        break;
      case 'int':
      case 'long':
      case 'enum':
        long();
        break;
      case 'float':
      case 'double':
        need(fixedWidth[t.typeName]!);
        break;
      case 'bytes':
      case 'string':
        need(long());
        break;
      case 'fixed':
        need(t.size ?? 0);
        break;
      case 'array':
        blocks(() => walk(t.itemsType!), isEmpty(t.itemsType!));
        break;
      case 'map':
        blocks(() => {
          need(long());
          walk(t.valuesType!);
        }, false);
        break;
      case 'record':
      case 'error':
        for (const field of t.fields ?? []) walk(field.type);
        break;
      default: {
        if (!t.typeName.startsWith('union')) throw new UnknownType(t.typeName);
        const branch = t.types?.[long()];
        if (branch === undefined) throw new AvroBoundsError('a union branch out of range');
        walk(branch);
      }
    }
  };
  try {
    walk(type);
  } catch (error) {
    if (error instanceof UnknownType) return undefined;
    throw error;
  }
  return pos;
}
