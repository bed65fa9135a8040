#!/usr/bin/env bash
# Prints the service examples, real output of the shipped model, as Markdown blocks: starts
# gunicorn on a loopback port with models/default, runs each curl, stops the server.
#
#   docs/curl_examples.sh > /tmp/examples.md     # README.md, "Quick start", shows three of them
#
# Each line below is the arguments of one curl; answers are cut at 700 characters, and the
# address is shown as http://127.0.0.1:8000 (what `make run` serves).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8765}"
FLUENCY_ADMIN_TOKEN=s3cret .venv/bin/gunicorn --workers 2 --preload \
  --bind "127.0.0.1:$PORT" wsgi:app 2>/dev/null &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 180); do
  curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  sleep 1
done

while IFS= read -r args; do
  [ -n "$args" ] || continue
  printf '```console\n$ curl %s\n' "$args"
  eval "curl ${args//127.0.0.1:8000/127.0.0.1:$PORT}" | sed "s/127.0.0.1:$PORT/127.0.0.1:8000/g" |
    cut -c1-700
  printf '\n```\n\n'
done <<'EOF'
-s http://127.0.0.1:8000/healthz
-s http://127.0.0.1:8000/readyz
-s http://127.0.0.1:8000/v1/score -H 'Content-Type: application/json' -d '{"sentences": ["The company said profits rose in the first quarter.", "profits the quarter in rose said first company The."]}'
-s http://127.0.0.1:8000/v1/score -H 'Content-Type: application/json' -d '{"sentences": ["The bank cut its rates. Shares rose sharply in early trading.", "The bank cut its rates shares rose sharply in early trading."]}'
-s http://127.0.0.1:8000/v1/score -H 'Content-Type: application/json' -d '{"sentences": ["The company said profits rose."], "features": true}'
-s http://127.0.0.1:8000/v1/score -H 'Content-Type: application/json' -d '{"sentences": ["X is a restaurant in the X area near X .", "X is restaurant a the in X area near X ."]}'
-s http://127.0.0.1:8000/v1/rerank -H 'Content-Type: application/json' -d '{"candidates": ["rose the profits company said.", "The company said profits rose.", "The company said profit rose rose."], "top_k": 2}'
-s http://127.0.0.1:8000/v1/rerank -H 'Content-Type: application/json' -d '{"candidates": ["The company said profits rose.", "Profits rose, the firm said."], "references": ["Profits rose, the firm said."]}'
-s http://127.0.0.1:8000/v1/accuracy -H 'Content-Type: application/json' -d '{"hypotheses": ["There was estimate for phase the second no cost"], "references": [["There was no cost estimate for the second phase"]]}'
-s http://127.0.0.1:8000/v1/model
-s http://127.0.0.1:8000/openapi.json
-s -i http://127.0.0.1:8000/v1/score -H 'Content-Type: application/json' -d '{"sentences": ["   "]}'
-s http://127.0.0.1:8000/v1/score -d '{oops'
-s http://127.0.0.1:8000/v1/admin/reload -X POST -H 'Authorization: Bearer s3cret' -H 'Content-Type: application/json' -d '{"model": "missing"}'
-s http://127.0.0.1:8000/v1/admin/reload -X POST -H 'Authorization: Bearer s3cret'
EOF
