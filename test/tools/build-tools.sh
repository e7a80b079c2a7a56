#!/usr/bin/env bash
# Builds the Go test tools into a cache outside the repository (placeholder until the tool list lands).
set -euo pipefail
source "$(dirname "$0")/env.sh"
mkdir -p "$CHORUS_TOOLS_BIN"
