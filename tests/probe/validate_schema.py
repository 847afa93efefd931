#!/usr/bin/env python3
"""validate_schema.py SCHEMA REPORT...: every report is valid under the JSON Schema (2020-12)."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
for path in sys.argv[2:]:
    errors = sorted(validator.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
    for e in errors:
        print(f"{path}: {'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
    if errors:
        sys.exit(1)
    print("valid:", path)
