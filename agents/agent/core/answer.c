/* SPDX-License-Identifier: MIT */
/*
 * The agent's answers (answer.h): written once, as valid JSON, to stdout or
 * to the session's capture buffer.
 */
#include <errno.h>
#include <stdio.h>

#include "agents/agent/core/answer.h"
#include "common/buf.h"
#include "common/escape.h"
#include "common/json.h"
#include "common/log.h"
#include "common/proto.h"

/* Where ln_agent_emit writes in a session (the request's answer). */
static struct ln_buf *capture;

void ln_agent_capture(struct ln_buf *b)
{
	capture = b;
}

/*
 * The answer as valid JSON whatever bytes the request held: json-c copies
 * bytes of 0x80 and up into strings as they are, so a byte that is not
 * well-formed UTF-8 (which occurs only inside strings) becomes "\ufffd".
 */
static int write_utf8(const struct ln_buf *in, struct ln_buf *out)
{
	const unsigned char *s = (const unsigned char *)in->buf;
	size_t i = 0, k;

	while (i < in->len) {
		for (k = i; k < in->len; k += ln_utf8_seq(s + k, in->len - k))
			if (!ln_utf8_seq(s + k, in->len - k))
				break;
		if (k > i && ln_buf_add(out, s + i, k - i) < 0)
			return -ENOMEM;
		if (k < in->len && ln_buf_addstr(out, "\\ufffd") < 0)
			return -ENOMEM;
		i = k < in->len ? k + 1 : k;
	}
	return 0;
}

int ln_agent_emit(struct json_object *obj)
{
	struct ln_buf out = LN_BUF_INIT, clean = LN_BUF_INIT;
	int r = ln_json_write(obj, !capture, &out);

	if (r == 0)
		r = write_utf8(&out, capture ? capture : &clean);
	if (r == 0 && !capture && fwrite(clean.buf, 1, clean.len, stdout) != clean.len)
		r = -EIO;
	if (!capture && fflush(stdout) != 0)
		r = -EIO;
	ln_buf_release(&out);
	ln_buf_release(&clean);
	return r;
}

int ln_agent_fail(const char *code, const char *message, int exit_code)
{
	struct json_object *o = json_object_new_object(), *e = json_object_new_object();

	ln_json_add_i64(o, "protocol", LN_PROTO_VERSION);
	ln_json_add_str(e, "code", code);
	ln_json_add_str(e, "message", message);
	ln_json_add(o, "error", e);
	ln_error("%s", message);
	ln_agent_emit(o);
	json_object_put(o);
	return exit_code;
}
