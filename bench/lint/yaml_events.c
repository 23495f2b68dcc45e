/* SPDX-License-Identifier: MIT */
/*
 * The floor for the lint benchmark: a bare libyaml event-level parse of a
 * file, reading it the way llmnet lint does (yaml_parser_set_input_file,
 * in chunks) and doing nothing with the events but count them. With
 * --in-memory it reads the whole file first and parses from memory, the
 * other common way to feed libyaml (a second floor, reported beside).
 * With --document it loads the document tree instead (yaml_parser_load),
 * the API lint does not use, for comparison.
 *   yaml_events [--in-memory|--document] FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

int main(int argc, char **argv)
{
	yaml_parser_t p;
	yaml_event_t ev;
	unsigned long n = 0;
	unsigned char *data = NULL;
	int done = 0, mem = 0, doc = 0;
	FILE *f;

	if (argc == 3 && !strcmp(argv[1], "--in-memory")) {
		mem = 1;
		argv++;
		argc--;
	} else if (argc == 3 && !strcmp(argv[1], "--document")) {
		doc = 1;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: yaml_events [--in-memory|--document] FILE\n");
		return 64;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	yaml_parser_initialize(&p);
	if (mem) {
		long len;

		if (fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
		    !(data = malloc((size_t)len + 1)) || fread(data, 1, (size_t)len, f) != (size_t)len) {
			perror(argv[1]);
			fclose(f);
			return 1;
		}
		yaml_parser_set_input_string(&p, data, (size_t)len);
	} else {
		yaml_parser_set_input_file(&p, f);
	}
	if (doc) {
		yaml_document_t d;

		if (!yaml_parser_load(&p, &d)) {
			fprintf(stderr, "%s: %s\n", argv[1], p.problem ? p.problem : "parse error");
			return 1;
		}
		n = (unsigned long)(d.nodes.top - d.nodes.start);
		yaml_document_delete(&d);
		done = 1;
	}
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			fprintf(stderr, "%s: %s\n", argv[1], p.problem ? p.problem : "parse error");
			return 1;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
		n++;
	}
	yaml_parser_delete(&p);
	free(data);
	fclose(f);
	printf("%lu %s\n", n, doc ? "nodes" : "events");
	return 0;
}
