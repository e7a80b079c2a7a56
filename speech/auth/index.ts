// Public surface of gateway authentication and authorisation.
export * from './api-key.js';
export * from './permissions.js';
export * from './authenticator.js';
export * from './key-issuer.js';
export * from './bootstrap.js';
