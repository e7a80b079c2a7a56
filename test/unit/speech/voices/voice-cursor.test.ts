// Voice-list cursors and locale ranges (pure).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import {
  createVoiceCursorCodec,
  CursorError,
  localeMatches,
  parseLocaleRange,
  sharedVoiceSeeds,
} from '../../../../speech/voices/index.js';

describe('speech voices: cursor codec', () => {
  const codec = createVoiceCursorCodec(randomBytes(32));
  const filter = { localeRange: 'en', gender: 'female' as const };

  it('round-trips both sections', () => {
    const shared = codec.encode({ section: 'shared', displayName: 'Zoë', id: 'zoe' }, 'ws_1', filter);
    expect(codec.decode(shared, 'ws_1', filter)).to.deep.equal({ section: 'shared', displayName: 'Zoë', id: 'zoe' });
    const personal = codec.encode({ section: 'personal', seq: 42 }, 'ws_1', filter);
    expect(codec.decode(personal, 'ws_1', filter)).to.deep.equal({ section: 'personal', seq: 42 });
    expect(shared).to.match(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('refuses tampering, other filters, other workspaces and other keys', () => {
    const cursor = codec.encode({ section: 'personal', seq: 7 }, 'ws_1', filter);
    const [body = '', mac = ''] = cursor.split('.');
    const forged = Buffer.from(Buffer.from(body, 'base64url').toString().replace('7', '8')).toString('base64url');
    const attempts: [string, string, typeof filter | Record<string, never>][] = [
      [`${forged}.${mac}`, 'ws_1', filter],
      [cursor, 'ws_1', {}],
      [cursor, 'ws_2', filter],
      [createVoiceCursorCodec(randomBytes(32)).encode({ section: 'personal', seq: 7 }, 'ws_1', filter), 'ws_1', filter],
      ['', 'ws_1', filter],
      ['a.b.c', 'ws_1', filter],
      ['not-a-cursor', 'ws_1', filter],
    ];
    for (const [c, ws, f] of attempts) expect(() => codec.decode(c, ws, f), c).to.throw(CursorError);
  });
});

describe('speech voices: locale ranges and catalog', () => {
  it('matches whole subtags case-insensitively', () => {
    expect(parseLocaleRange('EN-us')).to.equal('en-us');
    expect(parseLocaleRange('en_US')).to.equal(null);
    expect(parseLocaleRange('')).to.equal(null);
    expect(localeMatches('en-US', 'en')).to.equal(true);
    expect(localeMatches('en-US', 'en-us')).to.equal(true);
    expect(localeMatches('en-GB', 'en-us')).to.equal(false);
    expect(localeMatches('en-US', 'e')).to.equal(false);
  });

  it('has at least 20 shared voices over the eight locales, both genders each, unique ids', () => {
    const seeds = sharedVoiceSeeds();
    expect(seeds.length).to.be.at.least(20);
    expect(new Set(seeds.map((s) => s.id)).size).to.equal(seeds.length);
    for (const locale of ['en-US', 'en-GB', 'de-DE', 'es-ES', 'es-MX', 'fr-FR', 'it-IT', 'pt-BR']) {
      const genders = new Set(seeds.filter((s) => s.locale === locale).map((s) => s.gender));
      expect([...genders].sort(), locale).to.deep.equal(['female', 'male']);
    }
    for (const s of seeds) {
      expect(s.profile.espeakVoice, s.id).to.match(/^[a-z0-9-]+\+[mf]\d$/);
      expect(s.models, s.id).to.include('tts-3.0');
      expect(s.models.includes('tts-3.2'), s.id).to.equal(s.locale.startsWith('en-'));
    }
  });
});
