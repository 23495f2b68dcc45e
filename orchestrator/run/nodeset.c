/* SPDX-License-Identifier: MIT */
/*
 * --limit and --accept-replaced words to nodes (nodeset.h): each word is a
 * name, a range expanded by the spec's own host-list parser, or @FILE
 * holding such words, so a retry file written by a failed apply reads back
 * as it was written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "orchestrator/run/nodeset.h"
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
	ln_buf_release_all(&text, &e, &word);
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

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* A name as prefix and trailing number; width: the digits' count when
 * written with a leading zero (n08), else 0. Returns 0 without a number. */
static int split_name(const char *name, size_t *plen, unsigned long *num, int *width)
{
	size_t len = strlen(name), d = 0;

	while (d < len && name[len - 1 - d] >= '0' && name[len - 1 - d] <= '9')
		d++;
	if (!d || d > 9 || strchr(name, '['))
		return 0;
	*plen = len - d;
	*num = strtoul(name + *plen, NULL, 10);
	*width = d > 1 && name[*plen] == '0' ? (int)d : 0;
	return 1;
}

int ln_nodeset_format(const struct ln_spec *spec, const unsigned char *mark, struct ln_buf *out)
{
	unsigned char *done = calloc(spec->n_nodes ? spec->n_nodes : 1, 1);
	unsigned long *nums = calloc(spec->n_nodes ? spec->n_nodes : 1, sizeof(*nums));
	size_t i, j, k, n, plen, plen2;
	unsigned long num;
	int width, width2, first = 1;

	if (!done || !nums) {
		free(done);
		free(nums);
		return -ENOMEM;
	}
	for (i = 0; i < spec->n_nodes; i++) {
		const char *name = spec->nodes[i].name;

		if (!mark[i] || done[i])
			continue;
		if (!first)
			ln_buf_addch(out, ' ');
		first = 0;
		if (!split_name(name, &plen, &num, &width)) {
			ln_buf_addstr(out, name);
			continue;
		}
		/* every later marked name with the same prefix and padding */
		for (j = i, n = 0; j < spec->n_nodes; j++) {
			const char *o = spec->nodes[j].name;

			if (mark[j] && !done[j] && split_name(o, &plen2, &num, &width2) &&
			    plen2 == plen && width2 == width && !strncmp(o, name, plen)) {
				done[j] = 1;
				nums[n++] = num;
			}
		}
		qsort(nums, n, sizeof(*nums), cmp_ulong);
		if (n == 1) {
			ln_buf_addstr(out, name);
			continue;
		}
		ln_buf_addf(out, "%.*s[", (int)plen, name);
		for (k = 0; k < n; k = j) {
			for (j = k + 1; j < n && nums[j] == nums[j - 1] + 1; j++)
				;
			ln_buf_addf(out, "%s%0*lu", k ? "," : "", width, nums[k]);
			if (j - 1 > k)
				ln_buf_addf(out, "-%0*lu", width, nums[j - 1]);
		}
		ln_buf_addch(out, ']');
	}
	free(done);
	free(nums);
	return 0;
}
