// SPDX-License-Identifier: GPL-2.0
/*
 * keyhold: keeps the kernel's hot static keys switched on for the whole
 * guest run, so that the tests' churn of perf events and BPF attachments
 * does not re-patch the scheduler's code hundreds of times.
 *
 * Why: QEMU's multi-threaded TCG can go on executing a stale translation of
 * kernel text that text_poke_bp() has just rewritten (int3 first, then the
 * new instruction). Seen twice here (once in CI), both times while
 * hwsig.ko's configurations were created and released in a loop: both
 * vCPUs looping for ever between __schedule+0x280 (a static branch: the
 * int3 is still in the translation) and exc_int3 (kprobe_int3_handler finds
 * no int3 in memory any more and sends the CPU back to re-execute it),
 * interrupts off, nothing printed. Real CPUs serialize on the kernel's
 * sync_core() IPIs; the emulator's translation cache does not always.
 *
 * A static key is patched only when its count goes 0 -> 1 or 1 -> 0. One
 * event of each kind on CPU 0 keeps each count at 1 or more, so the events
 * hwsig.ko and the BPF collectors open and close never patch these sites.
 * What the tests check is unchanged: perf and tracepoints count the same
 * whether or not another user of the key exists.
 *
 * Usage: keyhold (runs until killed; prints how many keys it holds).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_event(struct perf_event_attr *attr, const char *what)
{
	int fd;

	attr->size = sizeof(*attr);
	fd = syscall(SYS_perf_event_open, attr, -1, 0, -1, 0);
	if (fd < 0)
		fprintf(stderr, "keyhold: %s: %s\n", what, strerror(errno));
	return fd >= 0;
}

static int hold_software(unsigned long long config, const char *what)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = config;
	return open_event(&attr, what);
}

/* perf_sched_events: enabled by any event that tracks context switches. */
static int hold_sched_events(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.context_switch = 1;
	return open_event(&attr, "dummy with context_switch");
}

static int hold_tracepoint(const char *name)
{
	struct perf_event_attr attr;
	char path[256];
	long long id;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", name);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "keyhold: %s: %s\n", path, strerror(errno));
		return 0;
	}
	ok = fscanf(f, "%lld", &id) == 1;
	fclose(f);
	if (!ok) {
		fprintf(stderr, "keyhold: %s: not a number\n", path);
		return 0;
	}
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (unsigned long long)id;
	return open_event(&attr, name);
}

int main(void)
{
	static const char *const tracepoints[] = {
		"sched/sched_switch", "sched/sched_wakeup", "sched/sched_wakeup_new",
		"block/block_rq_insert", "block/block_rq_issue", "block/block_rq_complete",
	};
	int held = 0;
	size_t i;

	held += hold_software(PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches");
	held += hold_software(PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations");
	held += hold_software(PERF_COUNT_SW_PAGE_FAULTS, "page-faults");
	held += hold_software(PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor-faults");
	held += hold_software(PERF_COUNT_SW_PAGE_FAULTS_MAJ, "major-faults");
	held += hold_sched_events();
	for (i = 0; i < sizeof(tracepoints) / sizeof(tracepoints[0]); i++)
		held += hold_tracepoint(tracepoints[i]);
	printf("keyhold: holding %d static keys on\n", held);
	fflush(stdout);
	for (;;)
		pause();
}
