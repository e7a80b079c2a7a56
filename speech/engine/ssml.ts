// Validation and tokenisation of synthesis input (plain text or SSML) into the text espeak receives and the words to mark.

/** Invalid SSML. The gateway answers 400 `validation_failed` with the position. */
export class SsmlError extends Error {
  readonly code = 'ssml_invalid' as const;
  constructor(
    message: string,
    /** Unicode code-point offset into the input where the problem was found. */
    readonly position: number,
  ) {
    super(`${message} (at character ${position})`);
    this.name = 'SsmlError';
  }
}

/** One word of the input (a run of non-space characters without its leading and trailing punctuation). */
export interface InputWord {
  /** The word with entities decoded. */
  readonly value: string;
  /** Code-point offset into the input, inclusive. */
  readonly start: number;
  /** Code-point offset into the input, exclusive. */
  readonly end: number;
}

/** One sentence: a span of the input and the words in it. */
export interface InputSentence {
  /** Code-point offset of the first word. */
  readonly start: number;
  /** Code-point offset just after the sentence's last character (its final punctuation included). */
  readonly end: number;
  /** Index into `ParsedInput.words` of the first word. */
  readonly firstWord: number;
  /** Number of words; at least 1. */
  readonly wordCount: number;
  /**
   * SSML only: the start tags (as written) of the elements open at the sentence's first word, outermost first,
   * `<speak …>` included; empty for plain text. Lets a later piece of the input be synthesised on its own.
   */
  readonly openTags: readonly string[];
}

/** A `<mark name>` and the input offset it sits at. */
export interface InputMark {
  readonly name: string;
  readonly offset: number;
}

export interface ParsedInput {
  /** True when the input is SSML (starts with `<speak`, leading whitespace allowed). */
  readonly ssml: boolean;
  /** The document handed to espeak, which always parses SSML: the SSML as sent, or the plain text escaped. */
  readonly engineText: string;
  /** For each code point of `engineText`, the code-point offset into the input it came from. */
  readonly engineOffsets: Int32Array;
  /** Every word of the input, in order, non-overlapping. */
  readonly words: readonly InputWord[];
  /** Sentences in order; every word belongs to exactly one. */
  readonly sentences: readonly InputSentence[];
  readonly marks: readonly InputMark[];
  /** Code points of the input with SSML tags removed (an entity counts as one). */
  readonly billableCharacters: number;
}

const SSML_START = /^\s*<speak[\s>/]/;

/** True when the input is to be treated as SSML. */
export function isSsml(input: string): boolean {
  return SSML_START.test(input);
}

/** Parses and validates the input once; throws `SsmlError` for malformed or unsupported SSML. */
export function parseSpeechInput(input: string): ParsedInput {
  const cps = Array.from(input);
  if (isSsml(input)) return parseSsml(cps);
  return parsePlain(cps);
}

/** Code points of the input with tags removed; throws `SsmlError` when SSML is invalid. */
export function billableCharacters(input: string): number {
  return parseSpeechInput(input).billableCharacters;
}

/** A character of text content and the input span it was written as (an entity spans several code points). */
interface TextChar {
  readonly ch: string;
  readonly start: number;
  readonly end: number;
}

const XML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

function parsePlain(cps: readonly string[]): ParsedInput {
  const engine: string[] = [];
  const offsets: number[] = [];
  const text: TextChar[] = [];
  cps.forEach((ch, i) => {
    const escaped = XML_ESCAPES[ch];
    for (const e of escaped === undefined ? [ch] : Array.from(escaped)) {
      engine.push(e);
      offsets.push(i);
    }
    text.push({ ch, start: i, end: i + 1 });
  });
  const tokens = new Tokeniser();
  tokens.addRun(text);
  tokens.breakSentence();
  return {
    ssml: false,
    engineText: engine.join(''),
    engineOffsets: Int32Array.from(offsets),
    words: tokens.words,
    sentences: tokens.sentences,
    marks: [],
    billableCharacters: cps.length,
  };
}

type AttrRule = (value: string) => boolean;

const PERCENT = /^[+-]?\d+(\.\d+)?%$/;
const NUMBER = /^\d+(\.\d+)?$/;
const RATE_WORDS = new Set(['x-slow', 'slow', 'medium', 'fast', 'x-fast', 'default']);
const PITCH_WORDS = new Set(['x-low', 'low', 'medium', 'high', 'x-high', 'default']);
const VOLUME_WORDS = new Set(['silent', 'x-soft', 'soft', 'medium', 'loud', 'x-loud', 'default']);
const STRENGTHS = new Set(['none', 'x-weak', 'weak', 'medium', 'strong', 'x-strong']);
const EMPHASIS_LEVELS = new Set(['strong', 'moderate', 'none', 'reduced']);
const INTERPRET_AS = new Set([
  'characters',
  'spell-out',
  'cardinal',
  'number',
  'ordinal',
  'digits',
  'date',
  'time',
  'telephone',
  'verbatim',
  'tts:char',
]);
const MAX_BREAK_MS = 10_000;
const LANG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

function anyText(value: string): boolean {
  return value.length <= 1000;
}

function nonEmpty(value: string): boolean {
  return value.trim().length > 0 && value.length <= 1000;
}

function rateValue(value: string): boolean {
  if (RATE_WORDS.has(value) || NUMBER.test(value)) return true;
  if (!PERCENT.test(value)) return false;
  return parseFloat(value) > (value.startsWith('-') ? -100 : 0);
}

function pitchValue(value: string): boolean {
  return PITCH_WORDS.has(value) || PERCENT.test(value) || /^[+-]?\d+(\.\d+)?(st|Hz)$/.test(value);
}

function volumeValue(value: string): boolean {
  return VOLUME_WORDS.has(value) || /^[+-]\d+(\.\d+)?dB$/.test(value) || PERCENT.test(value) || NUMBER.test(value);
}

function breakTime(value: string): boolean {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(value);
  if (m === null) return false;
  const ms = parseFloat(m[1] ?? '0') * (m[2] === 's' ? 1000 : 1);
  return ms <= MAX_BREAK_MS;
}

interface ElementRule {
  readonly attrs: Readonly<Record<string, AttrRule>>;
  readonly required?: readonly string[];
  /** At least one of these must be present. */
  readonly oneOf?: readonly string[];
  readonly empty?: boolean;
  /** Starts and ends a sentence. */
  readonly block?: boolean;
}

const LANG_ATTR: Readonly<Record<string, AttrRule>> = { 'xml:lang': (v) => LANG.test(v) };

const ELEMENTS: Readonly<Record<string, ElementRule>> = {
  speak: { attrs: { version: (v) => v === '1.0' || v === '1.1', xmlns: anyText, ...LANG_ATTR }, block: true },
  prosody: {
    attrs: { rate: rateValue, pitch: pitchValue, volume: volumeValue },
    oneOf: ['rate', 'pitch', 'volume'],
  },
  break: { attrs: { time: breakTime, strength: (v) => STRENGTHS.has(v) }, empty: true },
  emphasis: { attrs: { level: (v) => EMPHASIS_LEVELS.has(v) } },
  'say-as': {
    attrs: { 'interpret-as': (v) => INTERPRET_AS.has(v), format: anyText, detail: anyText },
    required: ['interpret-as'],
  },
  sub: { attrs: { alias: nonEmpty }, required: ['alias'] },
  mark: { attrs: { name: nonEmpty }, required: ['name'], empty: true },
  p: { attrs: LANG_ATTR, block: true },
  s: { attrs: LANG_ATTR, block: true },
};

const NAMED_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const NAME_START = /[A-Za-z_:]/;
const NAME_CHAR = /[A-Za-z0-9_:.-]/;
const SPACE = /\s/;

/** A recursive-descent reader over code points; `pos` is always a code-point offset into the input. */
class SsmlReader {
  pos = 0;
  private readonly text: TextChar[] = [];
  private readonly stack: { readonly name: string; readonly tag: string }[] = [];
  readonly tokens = new Tokeniser();
  readonly marks: InputMark[] = [];
  billable = 0;
  private rootClosed = false;

  constructor(private readonly cps: readonly string[]) {}

  private fail(message: string, at = this.pos): never {
    throw new SsmlError(message, at);
  }

  private peek(offset = 0): string {
    return this.cps[this.pos + offset] ?? '';
  }

  private startsWith(s: string): boolean {
    const chars = Array.from(s);
    return chars.every((c, i) => this.cps[this.pos + i] === c);
  }

  read(): void {
    while (this.pos < this.cps.length) {
      if (this.peek() === '<') this.readMarkup();
      else if (this.stack.length === 0) {
        if (!SPACE.test(this.peek())) this.fail(this.rootClosed ? 'text after </speak>' : 'text before <speak>');
        this.pos += 1;
      } else this.readCharData();
    }
    if (!this.rootClosed) {
      const open = this.stack[this.stack.length - 1]?.name ?? 'speak';
      this.fail(`<${open}> is not closed`);
    }
  }

  private flushText(): void {
    if (this.text.length > 0) this.tokens.addRun(this.text.splice(0));
  }

  private readCharData(): void {
    const start = this.pos;
    const c = this.peek();
    if (c === '&') {
      const semi = this.cps.indexOf(';', this.pos);
      if (semi < 0 || semi - this.pos > 12) this.fail('"&" must start an entity such as &amp;');
      const name = this.cps.slice(this.pos + 1, semi).join('');
      const decoded = decodeEntity(name);
      if (decoded === undefined) this.fail(`unknown entity &${name};`);
      this.pos = semi + 1;
      this.text.push({ ch: decoded, start, end: this.pos });
    } else {
      this.pos += 1;
      this.text.push({ ch: c, start, end: this.pos });
    }
    this.billable += 1;
  }

  private readMarkup(): void {
    const start = this.pos;
    if (this.startsWith('<!--')) {
      const close = findSeq(this.cps, '-->', this.pos + 4);
      if (close < 0) this.fail('comment is not closed');
      this.pos = close + 3;
      return;
    }
    if (this.startsWith('<?') || this.startsWith('<!')) this.fail('declarations, DOCTYPE and CDATA are not supported');
    this.flushText();
    if (this.peek(1) === '/') {
      this.pos += 2;
      const name = this.readName();
      this.skipSpace();
      if (this.peek() !== '>') this.fail(`expected ">" to close </${name}`);
      this.pos += 1;
      const open = this.stack.pop()?.name;
      if (open !== name)
        this.fail(open === undefined ? `unexpected </${name}>` : `</${name}> does not close <${open}>`, start);
      this.tokens.context = this.stack.map((e) => e.tag);
      this.endElement(name);
      return;
    }
    this.pos += 1;
    const name = this.readName();
    const rule = ELEMENTS[name];
    if (rule === undefined) this.fail(`unsupported element <${name}>`, start);
    if (this.rootClosed) this.fail('only one <speak> root is allowed', start);
    if (name === 'speak' && this.stack.length > 0) this.fail('<speak> cannot be nested', start);
    if (name !== 'speak' && this.stack.length === 0) this.fail(`<${name}> must be inside <speak>`, start);
    const attrs = this.readAttributes(name, rule);
    let selfClosing = false;
    if (this.peek() === '/') {
      selfClosing = true;
      this.pos += 1;
    }
    if (this.peek() !== '>') this.fail(`expected ">" to end <${name}`);
    this.pos += 1;
    if (rule.empty === true && !selfClosing) {
      // <break></break> is allowed by XML; anything inside is not.
      const closeTag = `</${name}>`;
      if (!this.startsWith(closeTag)) this.fail(`<${name}> must be empty`, start);
      this.pos += Array.from(closeTag).length;
      selfClosing = true;
    }
    if (name === 'mark') this.marks.push({ name: attrs.get('name') ?? '', offset: start });
    if (rule.block === true) this.tokens.breakSentence();
    if (selfClosing) {
      if (name === 'speak') this.rootClosed = true;
      return;
    }
    this.stack.push({ name, tag: this.cps.slice(start, this.pos).join('') });
    this.tokens.context = this.stack.map((e) => e.tag);
  }

  private endElement(name: string): void {
    if (ELEMENTS[name]?.block === true) this.tokens.breakSentence();
    if (name === 'speak') this.rootClosed = true;
  }

  private readName(): string {
    const start = this.pos;
    if (!NAME_START.test(this.peek())) this.fail('expected an element name');
    while (NAME_CHAR.test(this.peek())) this.pos += 1;
    return this.cps.slice(start, this.pos).join('');
  }

  private skipSpace(): void {
    while (SPACE.test(this.peek())) this.pos += 1;
  }

  private readAttributes(element: string, rule: ElementRule): Map<string, string> {
    const attrs = new Map<string, string>();
    for (;;) {
      const hadSpace = SPACE.test(this.peek());
      this.skipSpace();
      const c = this.peek();
      if (c === '>' || c === '/' || c === '') break;
      if (!hadSpace) this.fail(`expected a space before the attribute of <${element}>`);
      const at = this.pos;
      const name = this.readName();
      this.skipSpace();
      if (this.peek() !== '=') this.fail(`attribute "${name}" of <${element}> needs a value`);
      this.pos += 1;
      this.skipSpace();
      const quote = this.peek();
      if (quote !== '"' && quote !== "'") this.fail(`value of "${name}" must be quoted`);
      const close = this.cps.indexOf(quote, this.pos + 1);
      if (close < 0) this.fail(`value of "${name}" is not closed`);
      const raw = this.cps.slice(this.pos + 1, close).join('');
      if (raw.includes('<')) this.fail(`"<" in the value of "${name}"`, this.pos + 1);
      const value = decodeAttribute(raw, this.pos + 1);
      this.pos = close + 1;
      if (attrs.has(name)) this.fail(`duplicate attribute "${name}" on <${element}>`, at);
      const check = rule.attrs[name];
      if (check === undefined) this.fail(`unsupported attribute "${name}" on <${element}>`, at);
      if (!check(value.trim())) this.fail(`invalid value "${value}" for "${name}" on <${element}>`, at);
      attrs.set(name, value.trim());
    }
    for (const req of rule.required ?? []) {
      if (!attrs.has(req)) this.fail(`<${element}> needs the attribute "${req}"`);
    }
    if (rule.oneOf !== undefined && !rule.oneOf.some((a) => attrs.has(a))) {
      this.fail(`<${element}> needs one of ${rule.oneOf.map((a) => `"${a}"`).join(', ')}`);
    }
    return attrs;
  }
}

function findSeq(cps: readonly string[], seq: string, from: number): number {
  const chars = Array.from(seq);
  for (let i = from; i + chars.length <= cps.length; i += 1) {
    if (chars.every((c, j) => cps[i + j] === c)) return i;
  }
  return -1;
}

function decodeEntity(name: string): string | undefined {
  const named = NAMED_ENTITIES[name];
  if (named !== undefined) return named;
  const m = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(name);
  if (m === null) return undefined;
  const code = m[1] !== undefined ? parseInt(m[1], 16) : parseInt(m[2] ?? '', 10);
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
  return String.fromCodePoint(code);
}

function decodeAttribute(raw: string, at: number): string {
  return raw.replace(/&([^;&]*);?/g, (whole, name: string) => {
    const decoded = whole.endsWith(';') ? decodeEntity(name) : undefined;
    if (decoded === undefined) throw new SsmlError(`unknown entity ${whole} in an attribute`, at);
    return decoded;
  });
}

function parseSsml(cps: readonly string[]): ParsedInput {
  const reader = new SsmlReader(cps);
  reader.read();
  reader.tokens.breakSentence();
  return {
    ssml: true,
    engineText: cps.join(''),
    engineOffsets: Int32Array.from(cps, (_c, i) => i),
    words: reader.tokens.words,
    sentences: reader.tokens.sentences,
    marks: reader.marks,
    billableCharacters: reader.billable,
  };
}

const WORD_EDGE_PUNCTUATION = /[\p{P}]/u;
const SENTENCE_END = /[.!?…。！？]/u;

/** Splits text runs into words and sentences; tags between runs are word boundaries. */
class Tokeniser {
  readonly words: InputWord[] = [];
  readonly sentences: InputSentence[] = [];
  private sentenceFirstWord = 0;
  private sentenceEnd = 0;
  private sentenceTags: readonly string[] = [];
  /** Start tags of the elements open around the text being added (set by the SSML reader). */
  context: readonly string[] = [];

  addRun(run: readonly TextChar[]): void {
    let i = 0;
    while (i < run.length) {
      while (i < run.length && SPACE.test(run[i]?.ch ?? '')) i += 1;
      const from = i;
      while (i < run.length && !SPACE.test(run[i]?.ch ?? '')) i += 1;
      if (i > from) this.addChunk(run.slice(from, i), i >= run.length || SPACE.test(run[i]?.ch ?? ''));
    }
  }

  private addChunk(chunk: readonly TextChar[], followedBySpace: boolean): void {
    let a = 0;
    let b = chunk.length;
    while (a < b && WORD_EDGE_PUNCTUATION.test(chunk[a]?.ch ?? '')) a += 1;
    while (b > a && WORD_EDGE_PUNCTUATION.test(chunk[b - 1]?.ch ?? '')) b -= 1;
    const last = chunk[chunk.length - 1];
    if (last === undefined) return;
    if (b > a) {
      const first = chunk[a];
      const end = chunk[b - 1];
      if (first !== undefined && end !== undefined) {
        if (this.words.length === this.sentenceFirstWord) this.sentenceTags = this.context;
        this.words.push({
          value: chunk
            .slice(a, b)
            .map((c) => c.ch)
            .join(''),
          start: first.start,
          end: end.end,
        });
      }
    }
    if (this.words.length > this.sentenceFirstWord) this.sentenceEnd = last.end;
    const trailing = b > a ? chunk.slice(b) : chunk;
    if (followedBySpace && trailing.some((c) => SENTENCE_END.test(c.ch))) this.breakSentence();
  }

  breakSentence(): void {
    const count = this.words.length - this.sentenceFirstWord;
    if (count <= 0) return;
    const first = this.words[this.sentenceFirstWord];
    if (first === undefined) return;
    this.sentences.push({
      start: first.start,
      end: this.sentenceEnd,
      firstWord: this.sentenceFirstWord,
      wordCount: count,
      openTags: this.sentenceTags,
    });
    this.sentenceFirstWord = this.words.length;
  }
}
