/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the spec parser and checker: any bytes go through
 * ln_spec_load_buf(); a spec that loads is also serialized to JSON, so
 * the whole model (expanded ranges, resolved indexes) is walked. ASan and
 * UBSan turn any memory or arithmetic fault into a finding.
 *
 *   make fuzz && build/fuzz/fuzz_spec -max_total_time=600 build/fuzz/corpus tests/fuzz/corpus
 *   build/fuzz/fuzz_spec tests/fuzz/corpus/FILE...   (replay, as make check does)
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/json.h"
#include "orchestrator/spec/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ln_buf err = LN_BUF_INIT;
	struct json_object *o = NULL;
	struct ln_spec *spec = NULL;
	int r;

	r = ln_spec_load_buf("fuzz.yaml", (const char *)data, size, &spec, &err);
	if (r == 0) {
		/* A valid spec has no messages and a complete model. */
		if (err.len || ln_spec_to_json(spec, &o) < 0)
			__builtin_trap();
		json_object_put(o);
	} else if (r == -LN_ESPEC && !err.len) {
		/* Invalid must always say why. */
		__builtin_trap();
	}
	ln_spec_free(spec);
	ln_buf_release(&err);
	return 0;
}
