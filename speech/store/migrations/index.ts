// The ordered list of every store migration; append new ones, never edit a released one.
import type { Migration } from '../migration.js';
import { initialSchema } from './0001-initial-schema.js';

export const allMigrations: readonly Migration[] = [initialSchema];
