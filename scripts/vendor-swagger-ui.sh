#!/usr/bin/env bash
# Refreshes assets/swagger-ui/ from the swagger-ui-dist npm package. The files are
# committed and embedded in the binary, so the docs page works offline.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "swagger-ui-dist@$version" --silent >/dev/null && tar xzf swagger-ui-dist-*.tgz)
cp "$tmp"/package/{swagger-ui-bundle.js,swagger-ui.css,LICENSE,NOTICE} assets/swagger-ui/
echo "swagger-ui-dist $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$tmp/package/package.json") (npm), vendored by scripts/vendor-swagger-ui.sh" > assets/swagger-ui/VERSION
echo "assets/swagger-ui/ refreshed: $(cat assets/swagger-ui/VERSION)"
