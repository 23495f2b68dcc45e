/* SPDX-License-Identifier: MIT */
/*
 * --limit and --accept-replaced words to nodes (nodeset.h): each word is a
 * name, a range expanded by the spec's own host-list parser, or @FILE
 * holding such words, so a retry file written by a failed apply reads back
 * as it was written.
 */
#include <errno.h>
#include <string.h>

#include "common/fileio.h"
#include "orchestrator/nodeset.h"
#include "orchestrator/spec/hostlist.h"

static long find_name(const struct ln_spec *spec, const char *name)
{
	size_t i;

	for (i = 0; i < spec->n_nodes; i++)
		if (!strcmp(spec->nodes[i].name, name))
			return (long)i;
	return -1;
}

static int mark_name(const struct ln_spec *spec, const char *option, const char *name,
		     const char *from, unsigned char *mark, struct ln_buf *err)
{
	long k = find_name(spec, name);

	if (k < 0) {
		ln_buf_addf(err, "%s names '%s'%s%s, which is not a node of '%s'", option, name,
			    from ? " in " : "", from ? from : "", spec->path);
		return -EINVAL;
	}
	mark[k] = 1;
	return 0;
}

/* One word: a name or a range. from: the file it came from, or NULL. */
static int mark_word(const struct ln_spec *spec, const char *option, const char *word,
		     const char *from, unsigned char *mark, struct ln_buf *err)
{
	struct ln_buf name = LN_BUF_INIT, e = LN_BUF_INIT;
	struct ln_hostlist hl;
	size_t i;
	int r;

	if (!ln_hostlist_is_range(word))
		return mark_name(spec, option, word, from, mark, err);
	r = ln_hostlist_parse(word, &hl, &e);
	if (r < 0) {
		ln_buf_addf(err, "%s: %s", option, e.buf);
		ln_buf_release(&e);
		return r;
	}
	for (i = 0, r = 0; i < hl.count && r == 0; i++) {
		ln_buf_reset(&name);
		r = ln_hostlist_get(&hl, i, &name);
		if (r == 0)
			r = mark_name(spec, option, name.buf, from, mark, err);
	}
	ln_hostlist_release(&hl);
	ln_buf_release(&name);
	ln_buf_release(&e);
	return r;
}

/* Split s at commas and blanks, but not inside a range's brackets. */
static size_t word_len(const char *s)
{
	size_t n = 0;
	int depth = 0;

	for (; s[n]; n++) {
		if (s[n] == '[')
			depth++;
		else if (s[n] == ']' && depth)
			depth--;
		else if (!depth && strchr(", \t\r\n", s[n]))
			break;
	}
	return n;
}

static int mark_file(const struct ln_spec *spec, const char *option, const char *path,
		     unsigned char *mark, struct ln_buf *err)
{
	struct ln_buf text = LN_BUF_INIT, e = LN_BUF_INIT, word = LN_BUF_INIT;
	char *p, *line, *hash;
	int r, any = 0;

	r = ln_file_read(path, &text, &e);
	if (r < 0) {
		ln_buf_addf(err, "%s @%s: %s", option, path, e.buf);
		r = -EINVAL;
		goto out;
	}
	for (line = text.buf; line && *line && r == 0; line = p) {
		p = strchr(line, '\n');
		if (p)
			*p++ = '\0';
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		while (*line && r == 0) {
			size_t n = word_len(line);

			if (n) {
				ln_buf_reset(&word);
				ln_buf_add(&word, line, n);
				r = mark_word(spec, option, word.buf, path, mark, err);
				any = 1;
			}
			line += n;
			if (*line)
				line++;
		}
	}
	if (r == 0 && !any) {
		ln_buf_addf(err, "%s @%s names no node", option, path);
		r = -EINVAL;
	}
out:
	ln_buf_release(&text);
	ln_buf_release(&e);
	ln_buf_release(&word);
	return r;
}

int ln_nodeset_mark(const struct ln_spec *spec, const char *option, char *const *words,
		    size_t n, unsigned char *mark, struct ln_buf *err)
{
	size_t i;
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		if (words[i][0] == '@')
			r = mark_file(spec, option, words[i] + 1, mark, err);
		else
			r = mark_word(spec, option, words[i], NULL, mark, err);
	}
	return r;
}
