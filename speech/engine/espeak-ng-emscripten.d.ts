// Types for the untyped espeak-ng WebAssembly package: only the members the worker uses.
declare module '@echogarden/espeak-ng-emscripten' {
  export interface EspeakEvent {
    readonly type:
      'list_terminated' | 'word' | 'sentence' | 'mark' | 'play' | 'end' | 'msg_terminated' | 'phoneme' | 'samplerate';
    /** 1-based code-point position in the synthesised text. */
    readonly text_position: number;
    readonly word_length: number;
    /** Milliseconds from the start of the synthesis. */
    readonly audio_position: number;
    /** Phoneme symbol or mark name for phoneme/mark/play events, a counter for word/sentence events. */
    readonly id: string | number | undefined;
  }

  export interface EspeakVoiceInfo {
    readonly name: string;
    readonly identifier: string;
    readonly languages: readonly { readonly priority: number; readonly name: string }[];
  }

  export interface EspeakInstance {
    /** espeak_SetVoiceByName with a JS string or a pointer to a NUL-terminated UTF-8 name; 0 on success. */
    set_voice(name: string | number): number;
    set_rate(wordsPerMinute: number): void;
    set_pitch(pitch: number): void;
    set_range(range: number): void;
    get_samplerate(): number;
    list_voices(): EspeakVoiceInfo[];
    /** Synchronous; the callback gets each audio block (a copy) and its events; returning true stops synthesis. */
    synthesize(text: string | number, callback: (audio: Int16Array, events: EspeakEvent[]) => boolean): void;
  }

  export interface EspeakModule {
    readonly eSpeakNGWorker: new () => EspeakInstance;
    /** The whole WebAssembly memory; replaced by a new view when memory grows. */
    readonly HEAPU8: Uint8Array;
    _malloc(bytes: number): number;
  }

  const createEspeakModule: (options?: Record<string, unknown>) => Promise<EspeakModule>;
  export default createEspeakModule;
}
