import { expect } from 'chai';
import {
  espeakParameters,
  espeakVoiceForLocale,
  resolveEspeakVoice,
  supportedLocales,
} from '../../../../speech/engine/voices.js';

describe('espeak voice mapping', () => {
  it('maps the officially supported locales', () => {
    expect(espeakVoiceForLocale('en-US')).to.equal('en-us');
    expect(espeakVoiceForLocale('en-GB')).to.equal('en');
    expect(espeakVoiceForLocale('de-DE')).to.equal('de');
    expect(espeakVoiceForLocale('es-ES')).to.equal('es');
    expect(espeakVoiceForLocale('es-MX')).to.equal('es-419');
    expect(espeakVoiceForLocale('fr-FR')).to.equal('fr');
    expect(espeakVoiceForLocale('it-IT')).to.equal('it');
    expect(espeakVoiceForLocale('pt-BR')).to.equal('pt-br');
    expect(espeakVoiceForLocale('pt-br')).to.equal('pt-br');
    expect(espeakVoiceForLocale('xx-XX')).to.equal(undefined);
    expect(supportedLocales()).to.include.members(['en-US', 'de-DE', 'pt-BR']);
  });

  it('keeps the voice accent for its own language and the variant across languages', () => {
    expect(resolveEspeakVoice({ espeakVoice: 'en-gb-x-rp+m3' }, 'en-US')).to.equal('en-gb-x-rp+m3');
    expect(resolveEspeakVoice({ espeakVoice: 'en-us+f3' }, 'de-DE')).to.equal('de+f3');
    expect(resolveEspeakVoice({ espeakVoice: 'en-us' }, 'es-MX')).to.equal('es-419');
    expect(resolveEspeakVoice({ espeakVoice: 'en-us+f2' }, 'xx-XX')).to.equal('en-us+f2');
  });

  it('scales and clamps prosody percentages to espeak ranges', () => {
    expect(espeakParameters({ espeakVoice: 'en-us' })).to.deep.equal({ rateWpm: 175, pitch: 50, range: 50 });
    expect(
      espeakParameters({ espeakVoice: 'en-us', ratePercent: 200, pitchPercent: 150, pitchRangePercent: 0 }),
    ).to.deep.equal({
      rateWpm: 350,
      pitch: 75,
      range: 0,
    });
    expect(espeakParameters({ espeakVoice: 'en-us', ratePercent: 10, pitchPercent: 1000 })).to.deep.equal({
      rateWpm: 80,
      pitch: 100,
      range: 50,
    });
  });
});
