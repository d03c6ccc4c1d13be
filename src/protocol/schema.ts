// Kafka message schema DSL and the generic, version-compiled codec (main thread; loaded once).
// An API is declared as Field lists transcribed from Kafka's JSON schemas; defineApi() checks them
// and compiles, per (version, direction) on its first use, one decoder and one encoder as
// straight-line JavaScript, so the hot path never parses version strings, never visits fields a
// version lacks, and always builds objects of one shape per struct (every property of the
// struct, declaration order).
// Invariants: decoders only consume the Reader (bounds-checked, ProtocolError on bad input);
// generated source is built solely from our own definitions (identifiers are validated,
// literals escaped), never from wire data.

import { ProtocolError } from './reader.js';
import type { Reader } from './reader.js';
import { Writer, type MessageChunk } from './writer.js';

export type Primitive = 'int8' | 'int16' | 'int32' | 'int64' | 'uint16' | 'uint32' | 'float64'
  | 'bool' | 'uuid' | 'string' | 'bytes' | 'records';

export interface Field {
  readonly name: string;
  readonly type: Primitive | readonly Field[];
  readonly array?: true;
  readonly versions: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly tag?: number;
  readonly default?: number | string | boolean | null;
}

export interface ApiDefinition {
  readonly apiKey: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly flexibleVersions: string;
  readonly request: readonly Field[];
  readonly response: readonly Field[];
}

/**
 * A message as callers build it for encoding: any field may be left out and encodes as its
 * schema default, while a misspelled or mistyped field is still a compile error.
 */
export type Wire<T> = T extends Buffer
  ? T
  : T extends (infer E)[]
    ? Wire<E>[]
    : T extends readonly (infer E)[]
      ? readonly Wire<E>[]
      : T extends object
      ? { [K in keyof T]?: Wire<T[K]> }
      : T;

export interface Api<Req, Res> {
  readonly key: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** The declaration this codec was compiled from (tests derive generators from it). */
  readonly definition: ApiDefinition;
  isFlexible(version: number): boolean;
  decodeRequest(version: number, r: Reader): Req;
  encodeRequest(version: number, req: Req | Wire<Req>, w: Writer): void;
  decodeResponse(version: number, r: Reader): Res;
  encodeResponse(version: number, res: Res | Wire<Res>, w: Writer): void;
}

export type AnyApi = Api<unknown, unknown>;

/**
 * What a `records` field encodes from: one buffer, or chunks by reference (buffers, or segment-file
 * ranges that only a sink that sends files may receive), or null. Decoders always give a Buffer.
 */
export type RecordsValue = Buffer | readonly MessageChunk[] | null;

const NO_RECORDS = Buffer.alloc(0);

/** The bytes of a decoded records field (a decoder always gives one Buffer; null reads as none). */
export function decodedRecords(v: RecordsValue): Buffer {
  if (v === null) return NO_RECORDS;
  if (Buffer.isBuffer(v)) return v;
  throw new TypeError('records value holds chunks: only decoded records can be read');
}

export const ZERO_UUID = '00000000000000000000000000000000';

/** Whether `version` lies in a Kafka version spec: 'none', 'N', 'N+', 'N-M'. */
export function versionIn(spec: string | undefined, version: number): boolean {
  if (spec === undefined || spec === 'none') return false;
  const m = /^(\d+)(\+|-(\d+))?$/.exec(spec);
  if (m === null) throw new Error(`bad version spec ${JSON.stringify(spec)}`);
  const lo = Number(m[1]);
  if (m[2] === '+') return version >= lo;
  const hi = m[3] === undefined ? lo : Number(m[3]);
  return version >= lo && version <= hi;
}

/** The value a field takes when absent: its declared default, else the type's zero value. */
export function fieldDefault(f: Field): unknown {
  if (f.default !== undefined) return parseDefault(f);
  if (f.nullableVersions !== undefined && f.nullableVersions !== 'none') return null;
  return zeroValue(f);
}

function zeroValue(f: Field): unknown {
  if (f.array) return [];
  if (typeof f.type !== 'string') return structDefault(f.type);
  switch (f.type) {
    case 'bool': return false;
    case 'uuid': return ZERO_UUID;
    case 'string': return '';
    case 'bytes': case 'records': return Buffer.alloc(0);
    default: return 0;
  }
}

function parseDefault(f: Field): unknown {
  const d = f.default;
  if (d === null) return null;
  if (f.array || typeof f.type !== 'string') throw new Error(`${f.name}: only null defaults for arrays/structs`);
  return d;
}

function structDefault(fields: readonly Field[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of fields) o[f.name] = fieldDefault(f);
  return o;
}

// ---------------------------------------------------------------------------------------------
// Code generation. One Gen per (version, direction); it emits one function per struct.

type DecodeFn = (r: Reader) => unknown;
type EncodeFn = (w: Writer, v: unknown) => void;

interface Helpers {
  readonly ProtocolError: typeof ProtocolError;
  readonly Writer: typeof Writer;
  readonly EMPTY_BUF: Buffer;
  readonly EMPTY_OBJ: Readonly<Record<string, never>>;
  nonNull(path: string): never;
}

const helpers: Helpers = {
  ProtocolError,
  Writer,
  EMPTY_BUF: Buffer.alloc(0),
  EMPTY_OBJ: Object.freeze({}),
  nonNull(path: string): never {
    throw new TypeError(`${path} is not nullable in this version`);
  },
};

const IDENT = /^[a-z][A-Za-z0-9]*$/;
/** Names an input object would "have" through Object.prototype even when the property is missing. */
const RESERVED = new Set(Object.getOwnPropertyNames(Object.prototype));

const FIXED_SIZE: Readonly<Record<string, number>> = {
  int8: 1, int16: 2, int32: 4, int64: 8, uint16: 2, uint32: 4, float64: 8, bool: 1, uuid: 16,
};

/** A JavaScript expression for a constant default (primitive values only). */
function literal(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Buffer.isBuffer(v) && v.length === 0) return 'H.EMPTY_BUF';
  throw new Error(`no literal for ${String(v)}`);
}

class Gen {
  private readonly out: string[] = [];
  private readonly decoders = new Map<readonly Field[], string>();
  private readonly encoders = new Map<readonly Field[], string>();
  private readonly defaults = new Map<readonly Field[], string>();
  private readonly defaultChecks = new Map<readonly Field[], string>();
  private seq = 0;

  constructor(private readonly version: number, private readonly flexible: boolean) {}

  compile(root: readonly Field[]): { decode: DecodeFn; encode: EncodeFn } {
    const dec = this.decoder(root, '');
    const enc = this.encoder(root, '');
    const src = `"use strict";\n${this.out.join('\n')}\nreturn { decode: ${dec}, encode: ${enc} };`;
    const factory = new Function('H', src) as (h: Helpers) => { decode: DecodeFn; encode: EncodeFn };
    return factory(helpers);
  }

  private name(prefix: string): string {
    return `${prefix}${this.seq++}`;
  }

  private present(f: Field): boolean { return versionIn(f.versions, this.version); }
  private tagged(f: Field): boolean { return this.flexible && versionIn(f.taggedVersions, this.version); }
  private nullable(f: Field): boolean { return versionIn(f.nullableVersions, this.version); }

  /** Smallest number of bytes one struct value can occupy in this version. */
  private minSize(fields: readonly Field[]): number {
    let n = this.flexible ? 1 : 0;
    for (const f of fields) {
      if (!this.present(f) || this.tagged(f)) continue;
      if (f.array) n += this.flexible ? 1 : 4;
      else if (typeof f.type !== 'string') n += this.nullable(f) ? 1 : this.minSize(f.type);
      else if (f.type === 'string') n += this.flexible ? 1 : 2;
      else if (f.type === 'bytes' || f.type === 'records') n += this.flexible ? 1 : 4;
      else n += FIXED_SIZE[f.type]!;
    }
    return n;
  }

  // --- defaults -------------------------------------------------------------------------------

  /** Expression for a fresh default value of `f` (as a decoder of an absent field yields it). */
  private defaultExpr(f: Field): string {
    const d = fieldDefault(f);
    if (d === null) return 'null';
    if (f.array) return '[]';
    if (typeof f.type !== 'string') return `${this.defaultFactory(f.type)}()`;
    return literal(d);
  }

  /** What an encoder writes for a missing property: the default, or the zero value if null
   *  cannot be written in this version. */
  private encodeDefaultExpr(f: Field): string {
    const d = this.defaultExpr(f);
    if (d !== 'null' || this.nullable(f)) return d;
    if (f.array) return '[]';
    if (typeof f.type !== 'string') return 'H.EMPTY_OBJ';
    return literal(zeroValue(f));
  }

  private defaultFactory(fields: readonly Field[]): string {
    const known = this.defaults.get(fields);
    if (known !== undefined) return known;
    const fn = this.name('z');
    this.defaults.set(fields, fn);
    const props = fields.map((f) => `${f.name}: ${this.defaultExpr(f)}`).join(', ');
    this.out.push(`function ${fn}() { return { ${props} }; }`);
    return fn;
  }

  // --- decode ---------------------------------------------------------------------------------

  private decoder(fields: readonly Field[], path: string): string {
    const known = this.decoders.get(fields);
    if (known !== undefined) return known;
    const fn = this.name('d');
    this.decoders.set(fields, fn);
    const body: string[] = [];
    const taggedCases: string[] = [];
    fields.forEach((f, i) => {
      const v = `v${i}`;
      if (!this.present(f)) {
        body.push(`const ${v} = ${this.defaultExpr(f)};`);
      } else if (this.tagged(f)) {
        body.push(`let ${v} = ${this.defaultExpr(f)};`);
        taggedCases.push(`case ${f.tag}: { const s = r.sub(size); ${this.readStmt(f, v, 's', path)} break; }`);
      } else {
        body.push(`let ${v}; ${this.readStmt(f, v, 'r', path)}`);
      }
    });
    if (this.flexible) body.push(this.tagLoop(taggedCases));
    const props = fields.map((f, i) => `${f.name}: v${i}`).join(', ');
    this.out.push(`function ${fn}(r) {\n${body.join('\n')}\nreturn { ${props} };\n}`);
    return fn;
  }

  private tagLoop(cases: string[]): string {
    if (cases.length === 0) return 'r.skipTags();';
    return `for (let n = r.uvarint(); n > 0; n--) { const tag = r.uvarint(); const size = r.uvarint();
      switch (tag) { ${cases.join('\n')} default: r.skip(size); } }`;
  }

  private readStmt(f: Field, target: string, r: string, path: string): string {
    const p = `${path}${f.name}`;
    if (!f.array) return `${target} = ${this.readValue(f, r, p)};`;
    const [n, a, i] = [this.name('n'), this.name('a'), this.name('i')];
    const count = this.flexible ? `${r}.compactArrayLength()` : `${r}.arrayLength()`;
    const onNull = this.nullable(f) ? `${target} = null;`
      : `throw new H.ProtocolError(${JSON.stringify(`null in non-nullable array ${p}`)});`;
    const elemSize = typeof f.type === 'string' ? (FIXED_SIZE[f.type] ?? 1) : this.minSize(f.type);
    return `{ const ${n} = ${count}; if (${n} < 0) { ${onNull} } else { ${r}.checkCount(${n}, ${elemSize});
      const ${a} = []; for (let ${i} = 0; ${i} < ${n}; ${i}++) ${a}.push(${this.readValue(f, r, `${p}[]`)});
      ${target} = ${a}; } }`;
  }

  /** Expression reading one (non-array) value of f's type. */
  private readValue(f: Field, r: string, path: string): string {
    const nul = !f.array && this.nullable(f);
    if (typeof f.type !== 'string') {
      // A nullable struct is preceded by an int8 marker: -1 null, 1 present.
      const read = `${this.decoder(f.type, `${path}.`)}(${r})`;
      return nul ? `(${r}.int8() < 0 ? null : ${read})` : read;
    }
    const flex = this.flexible;
    switch (f.type) {
      case 'string':
        return `${r}.${flex ? (nul ? 'compactNullableString' : 'compactString') : (nul ? 'nullableString' : 'string')}()`;
      case 'bytes': case 'records':
        return `${r}.${flex ? (nul ? 'compactNullableBytes' : 'compactBytes') : (nul ? 'nullableBytes' : 'bytes')}()`;
      default:
        return `${r}.${f.type}()`;
    }
  }

  // --- encode ---------------------------------------------------------------------------------

  private encoder(fields: readonly Field[], path: string): string {
    const known = this.encoders.get(fields);
    if (known !== undefined) return known;
    const fn = this.name('e');
    this.encoders.set(fields, fn);
    const body: string[] = [];
    const tagged: Field[] = [];
    for (const f of fields) {
      if (!this.present(f)) continue;
      if (this.tagged(f)) tagged.push(f);
      else body.push(this.writeField(f, 'w', path));
    }
    if (this.flexible) body.push(this.writeTags(tagged, path));
    this.out.push(`function ${fn}(w, o) {\n${body.join('\n')}\n}`);
    return fn;
  }

  /** Statement block loading `o.<name>` (default if missing) and writing it. */
  private writeField(f: Field, w: string, path: string): string {
    const x = this.name('x');
    return `{ let ${x} = o.${f.name}; if (${x} === undefined) ${x} = ${this.encodeDefaultExpr(f)};
      ${this.writeStmt(f, x, w, `${path}${f.name}`)} }`;
  }

  private writeStmt(f: Field, x: string, w: string, path: string): string {
    const flex = this.flexible;
    const nul = this.nullable(f);
    const guard = nul ? '' : `if (${x} === null) H.nonNull(${JSON.stringify(path)}); `;
    if (f.array) {
      const i = this.name('i');
      const nullMark = flex ? `${w}.uvarint(0);` : `${w}.int32(-1);`;
      const len = flex ? `${w}.uvarint(${x}.length + 1);` : `${w}.int32(${x}.length);`;
      return `${guard}if (${x} === null) { ${nullMark} } else { ${len}
        for (let ${i} = 0; ${i} < ${x}.length; ${i}++) ${this.writeValue(f, `${x}[${i}]`, w, `${path}[]`, false)} }`;
    }
    return guard + this.writeValue(f, x, w, path, nul);
  }

  /** Statement writing one (non-array) value. */
  private writeValue(f: Field, x: string, w: string, path: string, nul: boolean): string {
    if (typeof f.type !== 'string') {
      const write = `${this.encoder(f.type, `${path}.`)}(${w}, ${x} ?? H.EMPTY_OBJ);`;
      return nul ? `if (${x} === null) ${w}.int8(-1); else { ${w}.int8(1); ${write} }` : write;
    }
    const flex = this.flexible;
    switch (f.type) {
      case 'string':
        return `${w}.${flex ? (nul ? 'compactNullableString' : 'compactString') : (nul ? 'nullableString' : 'string')}(${x});`;
      case 'bytes':
        return `${w}.${flex ? (nul ? 'compactNullableBytes' : 'compactBytes') : (nul ? 'nullableBytes' : 'bytes')}(${x});`;
      case 'records':
        return `${w}.records(${x}, ${flex});`;
      default:
        return `${w}.${f.type}(${x});`;
    }
  }

  /** The tag buffer: count, then each non-default tagged field as (tag, size, payload). */
  private writeTags(tagged: Field[], path: string): string {
    if (tagged.length === 0) return 'w.uvarint(0);';
    const sorted = [...tagged].sort((a, b) => a.tag! - b.tag!);
    const lines: string[] = ['let nt = 0;'];
    sorted.forEach((f, i) => {
      lines.push(`const t${i} = o.${f.name}; const k${i} = !(${this.isDefaultExpr(f, `t${i}`)}); if (k${i}) nt++;`);
    });
    lines.push('w.uvarint(nt);');
    sorted.forEach((f, i) => {
      lines.push(`if (k${i}) { w.uvarint(${f.tag}); const s = new H.Writer(64);
        ${this.writeStmt(f, `t${i}`, 's', `${path}${f.name}`)}
        w.uvarint(s.length); for (const c of s.finish()) w.raw(c); }`);
    });
    return `{ ${lines.join('\n')} }`;
  }

  /** Expression: is `x` (possibly undefined) equal to f's default? */
  private isDefaultExpr(f: Field, x: string): string {
    const d = this.defaultExpr(f);
    if (d === 'null') return `(${x} === undefined || ${x} === null)`;
    if (f.array || f.type === 'bytes' || f.type === 'records') {
      return `(${x} === undefined || (${x} !== null && ${x}.length === 0))`;
    }
    if (typeof f.type !== 'string') return `(${x} === undefined || ${this.defaultCheck(f.type)}(${x}))`;
    return `(${x} === undefined || ${x} === ${d})`;
  }

  private defaultCheck(fields: readonly Field[]): string {
    const known = this.defaultChecks.get(fields);
    if (known !== undefined) return known;
    const fn = this.name('q');
    this.defaultChecks.set(fields, fn);
    const terms = fields.filter((f) => this.present(f)).map((f) => this.isDefaultExpr(f, `o.${f.name}`));
    this.out.push(`function ${fn}(o) { return ${terms.length === 0 ? 'true' : terms.join(' && ')}; }`);
    return fn;
  }
}

// ---------------------------------------------------------------------------------------------
// Definition checks, run once per API at load.

function validateFields(fields: readonly Field[], where: string): void {
  const names = new Set<string>();
  for (const f of fields) {
    const at = `${where}.${f.name}`;
    if (!IDENT.test(f.name) || RESERVED.has(f.name)) throw new Error(`${at}: bad field name`);
    if (names.has(f.name)) throw new Error(`${at}: duplicate field`);
    names.add(f.name);
    versionIn(f.versions, 0);
    versionIn(f.nullableVersions, 0);
    versionIn(f.taggedVersions, 0);
    if (f.taggedVersions !== undefined && (f.tag === undefined || !Number.isInteger(f.tag) || f.tag < 0)) {
      throw new Error(`${at}: tagged field needs a tag`);
    }
    if (f.type === 'records' && f.array) throw new Error(`${at}: records cannot be an array`);
    if (typeof f.type !== 'string') validateFields(f.type, at);
    else if (!(f.type in FIXED_SIZE) && !['string', 'bytes', 'records'].includes(f.type)) {
      throw new Error(`${at}: unknown type ${f.type}`);
    }
  }
}

function validateTags(fields: readonly Field[], version: number, flexible: boolean, where: string): void {
  const tags = new Set<number>();
  for (const f of fields) {
    if (!versionIn(f.versions, version)) continue;
    if (f.taggedVersions !== undefined && !versionIn(f.taggedVersions, version)) {
      throw new Error(`${where}.${f.name}: present but untagged in v${version}`);
    }
    if (versionIn(f.taggedVersions, version)) {
      if (!flexible) throw new Error(`${where}.${f.name}: tagged in non-flexible v${version}`);
      if (tags.has(f.tag!)) throw new Error(`${where}: duplicate tag ${f.tag} in v${version}`);
      tags.add(f.tag!);
    }
    if (typeof f.type !== 'string') validateTags(f.type, version, flexible, `${where}.${f.name}`);
  }
}

// ---------------------------------------------------------------------------------------------

type Codec = { decode: DecodeFn; encode: EncodeFn };

/**
 * One codec per version of a message: the schema is checked for every version at once, and each
 * version is compiled on its first use. Compiling every version of every API at load was about a
 * third of the CPU that loading the broker's modules took (and each shard worker paid part of it),
 * while a process uses a few versions.
 */
class VersionCodecs {
  private readonly codecs: (Codec | undefined)[];

  constructor(private readonly d: MessageDefinition) {
    validateFields(d.fields, d.name);
    for (let v = d.minVersion; v <= d.maxVersion; v++) validateTags(d.fields, v, versionIn(d.flexibleVersions, v), d.name);
    this.codecs = new Array<Codec | undefined>(d.maxVersion - d.minVersion + 1);
  }

  /** The codec of version minVersion + index (the caller checked the range). */
  at(index: number): Codec {
    const v = this.d.minVersion + index;
    return (this.codecs[index] ??= new Gen(v, versionIn(this.d.flexibleVersions, v)).compile(this.d.fields));
  }
}

class CompiledApi<Req, Res> implements Api<Req, Res> {
  readonly key: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  private readonly flex: boolean[] = [];
  private readonly reqCodec: VersionCodecs;
  private readonly resCodec: VersionCodecs;

  constructor(readonly definition: ApiDefinition) {
    const d = definition;
    this.key = d.apiKey;
    this.name = d.name;
    this.minVersion = d.minVersion;
    this.maxVersion = d.maxVersion;
    for (let v = d.minVersion; v <= d.maxVersion; v++) this.flex.push(versionIn(d.flexibleVersions, v));
    this.reqCodec = new VersionCodecs({ ...d, name: `${d.name}Request`, fields: d.request });
    this.resCodec = new VersionCodecs({ ...d, name: `${d.name}Response`, fields: d.response });
  }

  private index(version: number): number {
    if (!Number.isInteger(version) || version < this.minVersion || version > this.maxVersion) {
      throw new ProtocolError(`${this.name} v${version} is not supported`);
    }
    return version - this.minVersion;
  }

  isFlexible(version: number): boolean {
    return this.flex[this.index(version)]!;
  }

  decodeRequest(version: number, r: Reader): Req {
    return this.reqCodec.at(this.index(version)).decode(r) as Req;
  }

  encodeRequest(version: number, req: Req | Wire<Req>, w: Writer): void {
    this.reqCodec.at(this.index(version)).encode(w, req);
  }

  decodeResponse(version: number, r: Reader): Res {
    return this.resCodec.at(this.index(version)).decode(r) as Res;
  }

  encodeResponse(version: number, res: Res | Wire<Res>, w: Writer): void {
    this.resCodec.at(this.index(version)).encode(w, res);
  }
}

export function defineApi<Req, Res>(def: ApiDefinition): Api<Req, Res> {
  return new CompiledApi<Req, Res>(def);
}

/** A versioned data schema outside any API: Kafka's "data" messages, such as the records of `__consumer_offsets`. */
export interface MessageDefinition {
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly flexibleVersions: string;
  readonly fields: readonly Field[];
}

export interface Message<T> {
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** Throws ProtocolError on bytes it cannot read or a version outside the schema's range. */
  decode(version: number, r: Reader): T;
  encode(version: number, value: T | Wire<T>, w: Writer): void;
}

class CompiledMessage<T> implements Message<T> {
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  private readonly codecs: VersionCodecs;

  constructor(d: MessageDefinition) {
    this.name = d.name;
    this.minVersion = d.minVersion;
    this.maxVersion = d.maxVersion;
    this.codecs = new VersionCodecs(d);
  }

  private codec(version: number): Codec {
    if (!Number.isInteger(version) || version < this.minVersion || version > this.maxVersion) {
      throw new ProtocolError(`${this.name} v${version} is not supported`);
    }
    return this.codecs.at(version - this.minVersion);
  }

  decode(version: number, r: Reader): T {
    return this.codec(version).decode(r) as T;
  }

  encode(version: number, value: T | Wire<T>, w: Writer): void {
    this.codec(version).encode(w, value);
  }
}

export function defineMessage<T>(def: MessageDefinition): Message<T> {
  return new CompiledMessage<T>(def);
}
