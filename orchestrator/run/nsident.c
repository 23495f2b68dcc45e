// SPDX-License-Identifier: MIT
/* Stable namespace identity (see nsident.h for the derivation) and the
 * device pins apply --accept-device lets the agents replace. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "common/buf.h"
#include "orchestrator/run/nsident.h"
#include "orchestrator/spec/spec.h"

static void digest(const char *text, unsigned char md[SHA256_DIGEST_LENGTH])
{
	SHA256((const unsigned char *)text, strlen(text), md);
}

/* 16 bytes as 8-4-4-4-12 lower-case hex. */
static void uuid_form(const unsigned char *b, char out[LN_UUID_LEN + 1])
{
	size_t i, o = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		snprintf(out + o, 3, "%02x", b[i]);
		o += 2;
	}
	out[o] = '\0';
}

void ln_nsident_serial(const char *cluster, const char *nqn, char out[LN_SERIAL_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char text[600];
	size_t i;

	snprintf(text, sizeof(text), "llmnet/%s/%s", cluster, nqn);
	digest(text, md);
	for (i = 0; i < LN_SERIAL_LEN / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

void ln_nsident_ns(const char *cluster, const char *nqn, uint32_t nsid, char uuid[LN_UUID_LEN + 1],
		   char nguid[LN_UUID_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char text[620];

	snprintf(text, sizeof(text), "llmnet/%s/%s/%" PRIu32, cluster, nqn, nsid);
	digest(text, md);
	uuid_form(md + 16, nguid);
	md[6] = (unsigned char)((md[6] & 0x0f) | 0x80);	/* version 8 */
	md[8] = (unsigned char)((md[8] & 0x3f) | 0x80);	/* variant 10 */
	uuid_form(md, uuid);
}

/* 1 when word is node ':' device. */
static int names(const char *word, const char *node, const char *device)
{
	size_t n = strlen(node);

	return !strncmp(word, node, n) && word[n] == ':' && !strcmp(word + n + 1, device);
}

int ln_nsident_accepted(char *const *words, size_t n, const char *node, const char *device)
{
	size_t i;

	for (i = 0; device && i < n; i++)
		if (names(words[i], node, device))
			return 1;
	return 0;
}

/* The node index named by word's NODE part, or spec->n_nodes. */
static size_t node_of(const struct ln_spec *spec, const char *word, size_t len)
{
	size_t i;

	for (i = 0; i < spec->n_nodes; i++)
		if (strlen(spec->nodes[i].name) == len && !strncmp(spec->nodes[i].name, word, len))
			break;
	return i;
}

/* 1 when node exports a device: namespace at path (the spec's spelling). */
static int exports_device(const struct ln_spec *spec, size_t node, const char *path)
{
	size_t t, k;

	for (t = 0; t < spec->n_targets; t++)
		for (k = 0; spec->targets[t].node == node && k < spec->targets[t].n_namespaces; k++)
			if (spec->targets[t].namespaces[k].device &&
			    !strcmp(spec->targets[t].namespaces[k].device, path))
				return 1;
	return 0;
}

int ln_nsident_accept_check(const struct ln_spec *spec, char *const *words, size_t n,
			    struct ln_buf *err)
{
	size_t i, node;
	const char *colon;

	for (i = 0; i < n; i++) {
		colon = strchr(words[i], ':');
		if (!colon || colon == words[i] || !colon[1]) {
			ln_buf_addf(err, "--accept-device '%s': takes NODE:PATH, a node of the spec "
				    "and the device of one of its namespaces (n1:/dev/nvme0n1)",
				    words[i]);
			return -EINVAL;
		}
		node = node_of(spec, words[i], (size_t)(colon - words[i]));
		if (node == spec->n_nodes) {
			ln_buf_addf(err, "--accept-device '%s': the spec has no node '%.*s'", words[i],
				    (int)(colon - words[i]), words[i]);
			return -EINVAL;
		}
		if (!exports_device(spec, node, colon + 1)) {
			ln_buf_addf(err, "--accept-device '%s': no target on node '%s' has a namespace "
				    "with device '%s' (write the path as the spec does)", words[i],
				    spec->nodes[node].name, colon + 1);
			return -EINVAL;
		}
	}
	return 0;
}
