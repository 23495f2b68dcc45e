# SPDX-License-Identifier: MIT
# spec: the spec tier (examples, invalid corpus, schema, fuzz replay),
# the libFuzzer target and the lint benchmark.
#
#   make tier-spec    every example lints; each tests/spec/*.yaml gives
#                     exactly its .err; schema checks; fuzz corpus replay
#   make fuzz         build/fuzz/fuzz_spec and fuzz_answers (clang, libFuzzer,
#                     ASan+UBSan); tier-spec replays both corpora
#   make bench-lint   4,096-node spec: llmnet lint vs a bare libyaml parse

.PHONY: tier-spec bench-lint

FUZZ_DIR := $(BUILD)/fuzz
# Only what the spec parser needs, compiled by clang with the fuzzer's
# instrumentation (the gcc objects of libllmnet.a cannot be reused): the
# whole of orchestrator/spec/ by a glob, so a new spec file cannot drop
# out of the fuzzer, and the common files it uses.
SPEC_FUZZ_SRC := common/buf.c common/dhchap.c common/error.c common/json.c common/log.c \
	common/mca_policy.c \
	common/nccl_env.c \
	common/places.c \
	$(sort $(wildcard orchestrator/spec/*.c))
# -Wno-format-nonliteral: common/log.c's printf wrapper passes its format
# on, which clang (unlike gcc at -Wformat=2) reports.
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Wno-format-nonliteral \
	-fno-omit-frame-pointer

# The answer parsers (answer.h): the same flags, only what they use.
ANSWER_FUZZ_SRC := common/buf.c common/error.c orchestrator/transport/answer.c

fuzz: $(FUZZ_DIR)/fuzz_spec $(FUZZ_DIR)/fuzz_answers

$(FUZZ_DIR)/fuzz_answers: tests/fuzz/fuzz_answers.c $(ANSWER_FUZZ_SRC) orchestrator/transport/answer.h $(wildcard common/*.h)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)clang $(WARNINGS) $(FUZZ_FLAGS) -I. -D_GNU_SOURCE -o $@ \
		tests/fuzz/fuzz_answers.c $(ANSWER_FUZZ_SRC) -ljson-c -lm

$(FUZZ_DIR)/fuzz_spec: tests/fuzz/fuzz_spec.c $(SPEC_FUZZ_SRC) $(wildcard orchestrator/spec/*.h common/*.h)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)clang $(WARNINGS) $(FUZZ_FLAGS) -I. -D_GNU_SOURCE -o $@ \
		tests/fuzz/fuzz_spec.c $(SPEC_FUZZ_SRC) -lyaml -ljson-c

$(BUILD)/bench/yaml_events: bench/lint/yaml_events.c
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(WARNINGS) -o $@ $< -lyaml

tier-spec: all $(FUZZ_DIR)/fuzz_spec $(FUZZ_DIR)/fuzz_answers
	$(Q)tests/spec/run.sh $(BUILD) $(FUZZ_DIR)/fuzz_spec
	$(Q)$(FUZZ_DIR)/fuzz_answers tests/fuzz/answers/* > $(FUZZ_DIR)/answers-replay.log 2>&1 || \
		{ cat $(FUZZ_DIR)/answers-replay.log; exit 1; }

$(BUILD)/bench/runstat: bench/lint/runstat.c
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(WARNINGS) -o $@ $<

# The parser alone, linked with only its own libraries (see the source).
$(BUILD)/bench/spec_only: bench/lint/spec_only.c $(call obj,$(filter-out tests/fuzz/%,$(SPEC_FUZZ_SRC)))
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ -lyaml -ljson-c

bench-lint: all $(BUILD)/bench/yaml_events $(BUILD)/bench/runstat $(BUILD)/bench/spec_only
	$(Q)bench/lint/run.sh $(BUILD)

CHECK_TIERS += spec:300
