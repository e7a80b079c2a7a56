import { expect } from 'chai';
import { billableCharacters, isSsml, parseSpeechInput, SsmlError } from '../../../../speech/engine/ssml.js';

function ssmlError(input: string): SsmlError {
  try {
    parseSpeechInput(input);
  } catch (err) {
    if (err instanceof SsmlError) return err;
    throw err;
  }
  throw new Error(`expected SsmlError for ${input}`);
}

describe('parseSpeechInput', () => {
  it('tokenises plain text into words and sentences with code-point offsets', () => {
    const p = parseSpeechInput('Héllo wörld 😀 ok. Second one!');
    expect(p.ssml).to.equal(false);
    expect(p.words.map((w) => [w.value, w.start, w.end])).to.deep.equal([
      ['Héllo', 0, 5],
      ['wörld', 6, 11],
      ['😀', 12, 13],
      ['ok', 14, 16],
      ['Second', 18, 24],
      ['one', 25, 28],
    ]);
    expect(p.sentences).to.deep.equal([
      { start: 0, end: 17, firstWord: 0, wordCount: 4, openTags: [] },
      { start: 18, end: 29, firstWord: 4, wordCount: 2, openTags: [] },
    ]);
    expect(p.billableCharacters).to.equal(29);
  });

  it('escapes plain text for espeak and maps every engine character back', () => {
    const p = parseSpeechInput('a<b & c>');
    expect(p.engineText).to.equal('a&lt;b &amp; c&gt;');
    expect(Array.from(p.engineOffsets)).to.deep.equal([0, 1, 1, 1, 1, 2, 3, 4, 4, 4, 4, 4, 5, 6, 7, 7, 7, 7]);
    expect(isSsml('a<b')).to.equal(false);
  });

  it('keeps SSML as sent and gives offsets into the SSML source', () => {
    const input =
      '<speak>Hello <prosody rate="50%">world</prosody>. <sub alias="World Wide Web">WWW</sub> &amp; R&amp;D</speak>';
    const p = parseSpeechInput(input);
    expect(p.ssml).to.equal(true);
    expect(p.engineText).to.equal(input);
    expect(p.words.map((w) => [w.value, w.start, w.end])).to.deep.equal([
      ['Hello', 7, 12],
      ['world', 33, 38],
      ['WWW', input.indexOf('WWW<'), input.indexOf('WWW<') + 3],
      ['R&D', input.indexOf('R&amp;D'), input.indexOf('R&amp;D') + 7],
    ]);
    expect(p.sentences.length).to.equal(2);
    // Hello + space + world + ". " + WWW + " & " + R&D
    expect(p.billableCharacters).to.equal('Hello world. WWW & R&D'.length);
  });

  it('splits sentences at <s> and <p> and records marks', () => {
    const input = '<speak><p><s>One two</s><s>three</s></p><p>four<mark name="x"/> five</p></speak>';
    const p = parseSpeechInput(input);
    expect(p.sentences.map((s) => s.wordCount)).to.deep.equal([2, 1, 2]);
    expect(p.marks).to.deep.equal([{ name: 'x', offset: input.indexOf('<mark') }]);
    expect(p.sentences.map((s) => s.openTags)).to.deep.equal([
      ['<speak>', '<p>', '<s>'],
      ['<speak>', '<p>', '<s>'],
      ['<speak>', '<p>'],
    ]);
  });

  it('accepts every supported element and attribute form', () => {
    const ok = [
      '<speak version="1.0" xml:lang="en-US">x</speak>',
      '<speak><prosody rate="x-slow" pitch="+3st" volume="-6dB">x</prosody></speak>',
      '<speak><prosody rate="1.5" pitch="200Hz" volume="loud">x</prosody></speak>',
      "<speak><prosody pitch='-30%'>x</prosody></speak>",
      '<speak>a<break time="1500ms"/>b<break strength="strong"></break><break time="2s"/></speak>',
      '<speak><emphasis level="strong">x</emphasis><emphasis>y</emphasis></speak>',
      '<speak><say-as interpret-as="characters">abc</say-as></speak>',
      '<speak><!-- a comment -->x &#233; &#x263A;</speak>',
      '  <speak>x</speak>  ',
      '<speak>5 > 3</speak>',
    ];
    for (const s of ok) expect(() => parseSpeechInput(s), s).not.to.throw();
  });

  it('rejects malformed or unsupported SSML with the position and what is wrong', () => {
    const cases: [string, number, RegExp][] = [
      ['<speak>Hello <foo>x</foo></speak>', 13, /unsupported element <foo>/],
      ['<speak><prosody rate="fast">x</speak>', 29, /does not close <prosody>/],
      ['<speak>Hello', 12, /<speak> is not closed/],
      ['<speak><prosody speed="fast">x</prosody></speak>', 16, /unsupported attribute "speed"/],
      ['<speak><prosody rate="warp">x</prosody></speak>', 16, /invalid value "warp"/],
      ['<speak><prosody rate="-100%">x</prosody></speak>', 16, /invalid value/],
      ['<speak><prosody>x</prosody></speak>', 15, /needs one of/],
      ['<speak><break time="20s"/></speak>', 14, /invalid value "20s"/],
      ['<speak><break time="1s">x</break></speak>', 7, /must be empty/],
      ['<speak><say-as>x</say-as></speak>', 14, /needs the attribute "interpret-as"/],
      ['<speak><sub alias="">x</sub></speak>', 12, /invalid value/],
      ['<speak>a &nbsp; b</speak>', 9, /unknown entity &nbsp;/],
      ['<speak>a & b</speak>', 9, /must start an entity/],
      ['<speak>x</speak> tail', 17, /text after <\/speak>/],
      ['<speak>x</speak><speak>y</speak>', 16, /only one <speak>/],
      ['<speak><speak>x</speak></speak>', 7, /cannot be nested/],
      ['<speak><prosody rate="fast" rate="slow">x</prosody></speak>', 28, /duplicate attribute/],
      ['<speak><prosody rate=fast>x</prosody></speak>', 21, /must be quoted/],
      ['<speak>x</prosody></speak>', 8, /<\/prosody> does not close <speak>/],
      ['<speak><![CDATA[x]]></speak>', 7, /CDATA/],
      ['<speak>😀<foo/></speak>', 8, /unsupported element/],
    ];
    for (const [input, position, message] of cases) {
      const err = ssmlError(input);
      expect(err.code).to.equal('ssml_invalid');
      expect(err.message, input).to.match(message);
      expect(err.position, input).to.equal(position);
    }
  });

  it('counts billable characters without tags, an entity as one', () => {
    expect(billableCharacters('<speak>a &amp; <break time="1s"/>b</speak>')).to.equal(5);
    expect(billableCharacters('plain <b> text')).to.equal(14);
    expect(() => billableCharacters('<speak>x')).to.throw(SsmlError);
  });

  it('gives no words for empty or punctuation-only input', () => {
    expect(parseSpeechInput('').words).to.deep.equal([]);
    expect(parseSpeechInput(' ... !').words).to.deep.equal([]);
    expect(parseSpeechInput('<speak></speak>').sentences).to.deep.equal([]);
  });
});
