#!/bin/sh
# Regenerate the API types: the Django app writes its OpenAPI document to openapi.json
# (django-ninja's export_openapi_schema, the document served at /api/v1/openapi.json), then
# openapi-typescript turns it into src/schema.ts. Both files are committed, so building
# the package needs neither Python nor the server. Run from clients/typescript: npm run gen
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
python="${PYTHON:-$root/.venv/bin/python}"
(cd "$root" && DEBUG=1 "$python" manage.py export_openapi_schema --api api.v1.api \
    --indent 2 --sorted --output "$here/openapi.json")
cd "$here"
npx openapi-typescript openapi.json --output src/schema.ts
