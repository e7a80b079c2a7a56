# Sourced by `make test`: puts the cached Go-built tools on PATH and names their directory for the tests.
CHORUS_TOOLS_DIR=${CHORUS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/chorus-tools}
export CHORUS_TOOLS_DIR
export CHORUS_TOOLS_BIN="$CHORUS_TOOLS_DIR/bin"
export PATH="$CHORUS_TOOLS_BIN:$PATH"
