// Public surface of the synthesis engine for the rest of the speech service (gateway, engine server).
export {
  EngineError,
  type EngineEvent,
  type SpeechEngine,
  type SynthesisInput,
  type VoiceProfile,
  type WordMark,
} from './engine.js';
export { createEspeakEngine, type EspeakEngineOptions } from './espeak-engine.js';
export { createRemoteEngine, type RemoteEngineOptions } from './remote-engine.js';
export { billableCharacters, isSsml, parseSpeechInput, SsmlError, type ParsedInput } from './ssml.js';
export { buildMarkTree, type MarkNode, type SentenceSpan } from './mark-tree.js';
export { espeakVoiceForLocale, resolveEspeakVoice, supportedLocales } from './voices.js';
