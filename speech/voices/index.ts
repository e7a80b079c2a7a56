// Public surface of the voice catalog.
export * from './shared-catalog.js';
export * from './voice-profile.js';
export * from './voice-json.js';
export * from './locale-range.js';
export * from './voice-cursor.js';
export * from './voice-list.js';
