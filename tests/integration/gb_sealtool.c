/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_sealtool.c - gb_seal on the command line, for seal-openssl.sh and
 * node-munge-key.sh
 *
 *   gb_sealtool seal PUBKEY.pem CONTEXT < message   > text (no newline)
 *   gb_sealtool open PRIVKEY.pem        < user-data > message
 *
 * "open" reads any text and opens its first gbseal1: token, as
 * gpuburst-node does with its user data.  Errors go to stderr, exit
 * status the gb_err_t.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_seal.h"
#include "gb_str.h"

static size_t slurp(FILE *f, unsigned char *buf, size_t max)
{
	size_t n = fread(buf, 1, max, f);

	if (!feof(f)) {
		fprintf(stderr, "gb_sealtool: input over %zu bytes\n", max);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	static unsigned char in[4 * GB_SEAL_MSG_MAX];
	unsigned char *msg = NULL;
	const char *tok;
	size_t n, tok_n, msg_n = 0;
	gb_error_t err = { 0 };
	char *text = NULL;
	gb_err_t rc;

	if (argc < 3 || (strcmp(argv[1], "seal") && strcmp(argv[1], "open")) ||
	    argc != (strcmp(argv[1], "seal") ? 3 : 4)) {
		fprintf(stderr, "usage: gb_sealtool seal PUBKEY.pem CONTEXT < message\n"
			"       gb_sealtool open PRIVKEY.pem < user-data\n");
		return 2;
	}
	n = slurp(stdin, in, sizeof(in));
	if (!strcmp(argv[1], "seal")) {
		rc = gb_seal(argv[2], argv[3], in, n, &text, &err);
		if (!rc)
			fputs(text, stdout);
		free(text);
	} else if (!gb_seal_find((const char *)in, n, &tok, &tok_n)) {
		rc = GB_E_NOTFOUND;
		gb_errorf(&err, rc, "no gbseal1: text in the input");
	} else if (!(rc = gb_seal_open(argv[2], tok, tok_n, &msg, &msg_n, &err))) {
		fwrite(msg, 1, msg_n, stdout);
		gb_seal_free(msg, msg_n);
	}
	gb_memzero(in, sizeof(in));
	if (rc)
		fprintf(stderr, "gb_sealtool: %s\n", err.text);
	return (int)rc;
}
