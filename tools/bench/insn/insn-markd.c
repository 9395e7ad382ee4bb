// SPDX-License-Identifier: GPL-2.0
/*
 * insn-markd: the insn-count plugin's marker, run on request from another
 * host (the two-host mode, tools/bench/insn/twohost.sh). It listens on
 * ADDR:PORT; each connection sends one line and gets one back:
 *   "mark"              runs the marker instruction; answers "ok N"
 *   "mark LABEL..."     the same, and appends "N LABEL..." to MARKS_FILE
 *   "quit"              answers "bye N" and exits 0
 * N counts the markers run in this guest: START (the markers run before
 * this process) plus this process's. While it waits for a connection it
 * executes nothing, so a job between two markers is counted with nothing
 * of the waiting in it (a shell polling for a file would be).
 *
 * usage: insn-markd ADDR PORT START MARKS_FILE
 * It prints "listening" on stdout once it accepts connections, and the
 * last N on stdout when it exits.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "insn-marker.h"

static int read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		char c;
		ssize_t r = read(fd, &c, 1);

		if (r <= 0 || c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return (int)n;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	unsigned long count;
	FILE *marks;
	int one = 1;
	int ls;

	if (argc != 5) {
		fprintf(stderr, "usage: insn-markd ADDR PORT START MARKS_FILE\n");
		return 2;
	}
	count = strtoul(argv[3], NULL, 10);
	marks = fopen(argv[4], "a");
	if (!marks) {
		perror(argv[4]);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "insn-markd: bad address %s\n", argv[1]);
		return 2;
	}
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 4)) {
		perror("insn-markd: listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		char line[256], reply[64];
		int c = accept(ls, NULL, NULL);

		if (c < 0) {
			perror("insn-markd: accept");
			return 1;
		}
		read_line(c, line, sizeof(line));
		if (!strcmp(line, "quit")) {
			snprintf(reply, sizeof(reply), "bye %lu\n", count);
			if (write(c, reply, strlen(reply)) < 0)
				perror("insn-markd: write");
			close(c);
			break;
		}
		if (strncmp(line, "mark", 4) || (line[4] != '\0' && line[4] != ' ')) {
			snprintf(reply, sizeof(reply), "error: unknown request\n");
		} else {
			insn_marker();
			count++;
			if (line[4] == ' ') {
				fprintf(marks, "%lu %s\n", count, line + 5);
				fflush(marks);
			}
			snprintf(reply, sizeof(reply), "ok %lu\n", count);
		}
		if (write(c, reply, strlen(reply)) < 0)
			perror("insn-markd: write");
		close(c);
	}
	close(ls);
	fclose(marks);
	printf("%lu\n", count);
	return 0;
}
