#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""check-json.py SCHEMA FILE [--lines]: validate itrace's JSON output
against tools/itrace/itrace.schema.json (python3-jsonschema).  FILE is one
document, or with --lines one document per line (JSON Lines).  Exit 0 if
every document is valid, 1 with the first error, 2 if jsonschema is
missing."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("check-json: python3-jsonschema is not installed", file=sys.stderr)
    sys.exit(2)


def main():
    schema = json.load(open(sys.argv[1]))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    text = open(sys.argv[2], encoding="utf-8").read()
    docs = ([json.loads(l) for l in text.splitlines() if l.strip()]
            if "--lines" in sys.argv[3:] else [json.loads(text)])
    if not docs:
        print("check-json: no document in", sys.argv[2], file=sys.stderr)
        return 1
    for i, doc in enumerate(docs):
        errors = sorted(validator.iter_errors(doc), key=lambda e: e.path)
        if errors:
            e = errors[0]
            print("check-json: %s: document %d: %s at %s" %
                  (sys.argv[2], i + 1, e.message, "/".join(map(str, e.absolute_path))),
                  file=sys.stderr)
            return 1
    print("check-json: %d valid document(s)" % len(docs))
    return 0


sys.exit(main())
