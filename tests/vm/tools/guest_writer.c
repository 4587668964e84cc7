// SPDX-License-Identifier: GPL-2.0
/*
 * guest_writer: stands in for a VM's QEMU writing its disk image, for the
 * vmio-writeback case. Installed in the guest as /bin/qemu-system-x86_64 so
 * that hwsig's VM discovery lists it (by its comm and -name guest=NAME).
 *
 * Usage: qemu-system-x86_64 -name guest=NAME -writer buffered|direct DEV
 *        OFFSET BYTES GO CGROUP
 *
 * Joins CGROUP (a cgroup v2 directory), opens DEV read-write (O_DIRECT for
 * "direct", as QEMU's cache=none; through the page cache for "buffered",
 * as its default cache=writeback), waits until the file GO exists, writes
 * BYTES from OFFSET in 4 KiB writes, creates GO.NAME and then waits to be
 * killed with the file still open, as a VM does: the buffered writer never
 * syncs or closes, so its pages reach the disk only through writeback,
 * which its own threads do not submit.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what)
{
	perror(what);
	return 1;
}

static int usage(const char *self)
{
	fprintf(stderr, "usage: %s -name guest=NAME -writer buffered|direct DEV OFFSET BYTES GO CGROUP\n",
		self);
	return 2;
}

/* Moves this process into the cgroup v2 directory `cgroup`. */
static int join(const char *cgroup)
{
	char path[4096], pid[32];
	int procs;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	procs = open(path, O_WRONLY);
	if (procs < 0 || write(procs, pid, strlen(pid)) < 0)
		return fail(path);
	close(procs);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name, *go;
	long long offset, bytes, done;
	char path[4096];
	void *block;
	int fd, mark;

	if (argc != 10 || strcmp(argv[1], "-name") || strncmp(argv[2], "guest=", 6) ||
	    strcmp(argv[3], "-writer"))
		return usage(argv[0]);
	name = argv[2] + 6;
	go = argv[8];
	offset = atoll(argv[6]);
	bytes = atoll(argv[7]);
	if (join(argv[9]))
		return 1;
	fd = open(argv[5], O_RDWR | (strcmp(argv[4], "direct") ? 0 : O_DIRECT));
	if (fd < 0)
		return fail(argv[5]);
	if (posix_memalign(&block, 4096, 4096))
		return fail("posix_memalign");
	memset(block, 0x5a, 4096);
	while (access(go, F_OK) != 0)
		usleep(10000);
	for (done = 0; done < bytes; done += 4096)
		if (pwrite(fd, block, 4096, offset + done) != 4096)
			return fail("pwrite");
	snprintf(path, sizeof(path), "%s.%s", go, name);
	mark = open(path, O_WRONLY | O_CREAT, 0644);
	if (mark < 0)
		return fail(path);
	close(mark);
	for (;;)
		pause();
}
