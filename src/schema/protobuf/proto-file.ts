/**
 * A Protobuf schema as the registry keeps it: the text of one `.proto` file, plus the files it imports (the
 * registry's references, by import name). Parsed with protobufjs into one `Root`; the well-known types
 * (`google/protobuf/timestamp.proto`, ...) come with the library and need no reference.
 */
import protobuf from 'protobufjs';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

/** A `.proto` file and, by import name, the files it imports (directly or not). */
export interface ProtoSchema {
  schema: string;
  imports?: Record<string, string>;
}

export interface ProtoFile {
  /** The file's package ('' when none). */
  readonly package: string;
  readonly syntax: 'proto2' | 'proto3';
  /** Every file parsed into one root, resolved (types looked up by full name, e.g. `shop.Order`). */
  readonly root: protobuf.Root;
  /** The file's own top-level messages in declaration order, by full name (message index 0 is the first). */
  readonly messages: string[];
}

const invalid = (message: string, cause?: unknown) =>
  new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, message, cause === undefined ? {} : { cause });

/** `{ schema, imports }` out of the text alone or the object. */
export function protoSchemaOf(raw: unknown): ProtoSchema {
  if (typeof raw === 'string') return { schema: raw };
  const given = raw as ProtoSchema | null;
  if (given && typeof given.schema === 'string') {
    const imports = given.imports ?? {};
    if (typeof imports !== 'object' || !Object.values(imports).every((text) => typeof text === 'string'))
      throw invalid('Protobuf imports must map import names to the text of the imported file');
    return { schema: given.schema, imports };
  }
  throw invalid('a Protobuf schema is the text of a .proto file');
}

function parseInto(text: string, root: protobuf.Root, name: string): protobuf.IParserResult {
  try {
    return protobuf.parse(text, root, { keepCase: true });
  } catch (error) {
    throw invalid(`${name} is not a valid .proto file: ${(error as Error).message}`, error);
  }
}

/** The files a `.proto` text imports, by import name, the well-known types (built in) left out. */
export const importNames = (text: string): string[] =>
  [...text.matchAll(/^\s*import\s+(?:public\s+|weak\s+)?["']([^"']+)["']/gm)]
    .map((match) => match[1] as string)
    .filter((name) => !name.startsWith('google/protobuf/'));

/** The syntax check alone (no import needed): what registering a schema validates before anything else. */
export function checkProtoSyntax(text: string): void {
  parseInto(text, new protobuf.Root(), 'the schema');
}

/** Declaration order of the messages directly in `namespace` (its nested messages and enums are kept in order). */
export const messagesIn = (namespace: protobuf.NamespaceBase): protobuf.Type[] =>
  namespace.nestedArray.filter((item): item is protobuf.Type => item instanceof protobuf.Type);

/**
 * The file alone, unresolved (its imports not read): its package, syntax and messages in order. Enough to turn
 * message indexes into a message's full name, and what a reader needs of a writer's schema.
 */
export function outlineProto(schema: string): ProtoFile {
  const alone = parseInto(schema, new protobuf.Root(), 'the schema');
  const pkg = alone.package ?? '';
  const own = pkg === '' ? alone.root : alone.root.lookup(pkg);
  const messages = own instanceof protobuf.Namespace || own instanceof protobuf.Root ? messagesIn(own) : [];
  return {
    package: pkg,
    syntax: /^\s*syntax\s*=\s*["']proto3["']/m.test(schema) ? 'proto3' : 'proto2',
    root: alone.root,
    messages: messages.map((type) => type.fullName.slice(1)),
  };
}

/** Parses the schema and its imports into one resolved root; `EFF_SCHEMA_INVALID` when a file or a type is missing. */
export function parseProto(raw: unknown): ProtoFile {
  const { schema, imports = {} } = protoSchemaOf(raw);
  // the file alone first: its own top-level messages, in order, without the imports' types of the same package
  const outline = outlineProto(schema);
  const root = new protobuf.Root();
  const seen = new Set<string>();
  const load = (text: string, name: string) => {
    const parsed = parseInto(text, root, name);
    for (const dependency of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
      if (seen.has(dependency)) continue;
      seen.add(dependency);
      const known = protobuf.common.get(dependency);
      if (known) root.addJSON(known.nested ?? {});
      else if (imports[dependency] !== undefined) load(imports[dependency], dependency);
      else throw invalid(`${name} imports \`${dependency}\`, which is not given (a registry reference names it)`);
    }
  };
  load(schema, 'the schema');
  try {
    root.resolveAll();
  } catch (error) {
    throw invalid(`the schema does not resolve: ${(error as Error).message}`, error);
  }
  return { ...outline, root };
}

/** The message at `indexes` (top-level index, then nested ones) of the file; undefined when there is none. */
export function messageAt(file: ProtoFile, indexes: number[]): protobuf.Type | undefined {
  const [first, ...rest] = indexes;
  const top = first === undefined ? undefined : file.messages[first];
  let type = top === undefined ? undefined : file.root.lookupType(top);
  for (const index of rest) type = type && messagesIn(type)[index];
  return type;
}

/** The indexes of a message of the file (by full name, e.g. `shop.Order.Line`); undefined when not the file's. */
export function indexesOf(file: ProtoFile, fullName: string): number[] | undefined {
  for (const [i, top] of file.messages.entries()) {
    if (fullName === top) return [i];
    if (!fullName.startsWith(`${top}.`)) continue;
    const path = [i];
    let type = file.root.lookupType(top);
    for (const part of fullName.slice(top.length + 1).split('.')) {
      const nested = messagesIn(type);
      const index = nested.findIndex((t) => t.name === part);
      if (index < 0) return undefined;
      path.push(index);
      type = nested[index] as protobuf.Type;
    }
    return path;
  }
  return undefined;
}
