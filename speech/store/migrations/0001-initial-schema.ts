// Migration 1: workspaces, members, API keys, voices (shared and personal), consent and idempotency records.
import type { Migration } from '../migration.js';

export const initialSchema: Migration = {
  version: 1,
  name: 'initial-schema',
  statements: [
    `CREATE TABLE workspaces (
       id text PRIMARY KEY,
       name text NOT NULL UNIQUE,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE members (
       id text PRIMARY KEY,
       workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
       email text NOT NULL,
       role text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
       created_at timestamptz NOT NULL DEFAULT now(),
       UNIQUE (workspace_id, email)
     )`,
    // A key acts either for a member (and their role) or as a named service account; never both.
    `CREATE TABLE api_keys (
       id text PRIMARY KEY,
       workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
       member_id text REFERENCES members(id) ON DELETE CASCADE,
       service_account text,
       prefix text NOT NULL UNIQUE,
       secret_sha256 text NOT NULL,
       scopes text[] NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       revoked_at timestamptz,
       CHECK ((member_id IS NULL) <> (service_account IS NULL))
     )`,
    // seq orders personal voices newest first and anchors voice-list cursors (stable under inserts).
    `CREATE TABLE voices (
       id text PRIMARY KEY,
       seq bigserial NOT NULL UNIQUE,
       type text NOT NULL CHECK (type IN ('shared', 'personal')),
       workspace_id text REFERENCES workspaces(id) ON DELETE CASCADE,
       display_name text NOT NULL,
       gender text NOT NULL CHECK (gender IN ('male', 'female', 'not_specified')),
       locale text NOT NULL,
       models text[] NOT NULL,
       profile jsonb NOT NULL,
       avatar_image text,
       sample bytea,
       sample_media_type text,
       created_by_key_id text,
       created_at timestamptz NOT NULL DEFAULT now(),
       CHECK ((type = 'shared') = (workspace_id IS NULL))
     )`,
    `CREATE INDEX voices_personal_order ON voices (workspace_id, seq DESC) WHERE type = 'personal'`,
    `CREATE INDEX voices_shared_order ON voices (display_name, id) WHERE type = 'shared'`,
    `CREATE TABLE consent_challenges (
       id text PRIMARY KEY,
       workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
       full_name text NOT NULL,
       phrase text NOT NULL,
       created_by_key_id text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       expires_at timestamptz NOT NULL,
       consumed_at timestamptz
     )`,
    // No foreign key to voices: deleting a voice keeps its consent record (spec A.6).
    `CREATE TABLE consent_records (
       id text PRIMARY KEY,
       workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
       challenge_id text NOT NULL UNIQUE REFERENCES consent_challenges(id),
       voice_id text,
       full_name text NOT NULL,
       phrase text NOT NULL,
       recording bytea NOT NULL,
       recording_media_type text NOT NULL,
       phrase_score double precision,
       speaker_score double precision,
       outcome text NOT NULL,
       created_by_key_id text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE idempotency_records (
       workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
       route text NOT NULL,
       idempotency_key text NOT NULL,
       request_sha256 text NOT NULL,
       state text NOT NULL CHECK (state IN ('in_flight', 'done')),
       status_code integer,
       response_body bytea,
       response_media_type text,
       created_at timestamptz NOT NULL DEFAULT now(),
       expires_at timestamptz NOT NULL,
       PRIMARY KEY (workspace_id, route, idempotency_key)
     )`,
    `CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at)`,
    // Process-wide secrets (e.g. the voice-list cursor key) shared by every gateway replica.
    `CREATE TABLE server_secrets (
       name text PRIMARY KEY,
       value bytea NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
  ],
};
