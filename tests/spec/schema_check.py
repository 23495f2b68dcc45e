#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Check specs/llmnet.schema.json against the specs: every example must be
# valid under the schema, and every case named in the rejects list (the
# invalid specs a JSON Schema can express: unknown keys, wrong types, enum
# values, patterns, numeric ranges, missing keys) must be flagged by it.
# Prints one "PASS name" or "FAIL name: why" line per check.
import glob
import os
import sys

import jsonschema
import yaml


def main():
    schema_path, examples_dir, rejects_list, cases_dir = sys.argv[1:5]
    with open(schema_path) as f:
        schema = yaml.safe_load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    failed = 0

    for path in sorted(glob.glob(os.path.join(examples_dir, "*.yaml"))):
        with open(path) as f:
            doc = yaml.safe_load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
        if errors:
            failed += 1
            e = errors[0]
            print("FAIL schema accepts %s: %s at %s" % (path, e.message[:200], list(e.path)))
        else:
            print("PASS schema accepts %s" % path)

    with open(rejects_list) as f:
        names = [l.split("#")[0].strip() for l in f]
    names = [n for n in names if n]
    for name in names:
        path = os.path.join(cases_dir, name + ".yaml")
        try:
            with open(path) as f:
                doc = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as e:
            failed += 1
            print("FAIL schema rejects %s: cannot load: %s" % (path, e))
            continue
        if validator.is_valid(doc):
            failed += 1
            print("FAIL schema rejects %s: the schema accepts it" % path)
        else:
            print("PASS schema rejects %s" % path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
