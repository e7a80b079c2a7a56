// Public surface of the speech store: drivers, migrations and repositories.
export * from './database.js';
export { openPgliteDatabase } from './database-pglite.js';
export { openPostgresDatabase } from './database-postgres.js';
export { openDatabase, type StoreLocation } from './open-database.js';
export { runMigrations, currentSchemaVersion, type Migration } from './migration.js';
export * from './workspace-repository.js';
export * from './api-key-repository.js';
export * from './voice-repository.js';
export { loadOrCreateSecret } from './secret-repository.js';
export { newId } from './ids.js';
export * from './idempotency-repository.js';
export * from './consent-repository.js';
