#!/usr/bin/env bash
# ctest docs.secret_names: every secret name the docs show (`quarry secret set NAME`, and the
# value of a `*_secret` setting in a JSON example) is one the CLI accepts: the shape of an
# environment variable, [A-Za-z_][A-Za-z0-9_]{0,63} (core::valid_secret_name). A doc that tells
# users to store `pg-dsn` sends them into invalid_argument.
set -euo pipefail
cd "${QUARRY_SOURCE_DIR:?}"
bad=0
while IFS= read -r hit; do
  name=${hit##*:}
  if ! [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]{0,63}$ ]]; then
    echo "docs.secret_names: ${hit%:*}: '$name' is not a valid secret name" >&2
    bad=1
  fi
done < <(grep -rnoE 'secret set [^ `"]+|_secret"[[:space:]]*:[[:space:]]*"[^"]+"' README.md docs \
           | sed -E 's/secret set /:/; s/_secret"[[:space:]]*:[[:space:]]*"([^"]+)"/:\1/' \
           | sed -E 's/^([^:]+:[0-9]+):[^:]*:/\1:/' | grep -v ':NAME$')
[ "$bad" = 0 ] && echo "docs.secret_names: ok"
exit "$bad"
