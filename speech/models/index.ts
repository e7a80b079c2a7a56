// Public surface of the model catalog.
export * from './model-catalog.js';
export * from './synthesis-model-check.js';
