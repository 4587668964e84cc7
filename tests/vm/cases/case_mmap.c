/* The mapping under what processes do to mappings: PROT_EXEC refused (and
 * mprotect to it); MADV_DONTNEED on the live rings, after which the
 * reader's reads still work (pages come back on the next access) and see
 * the producer's newer records; fork (the child reads through the
 * inherited mapping); mremap to another address; a mapping at a non-zero
 * offset (CPU 1's ring alone) that agrees with the full mapping; growing
 * by mremap refused. Reads that could fault run in a child, so a SIGBUS
 * fails the case instead of killing it. */
#define _GNU_SOURCE
#include "cases.h"
#include "common.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Status of a child running fn(arg): 0 on success. */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	int st = 0;
	waitpid(pid, &st, 0);
	return st;
}

/* The ring of cpu at base (full layout), its head after it advanced. */
struct ring_view {
	const unsigned char *base;
	const struct hwsig_control_page *ctl;
	unsigned cpu;
};

static uint64_t head_of(const struct ring_view *v)
{
	const struct hwsig_ring_header *h = (const void *)(v->base + v->ctl->ring_offset +
							   (uint64_t)v->cpu * v->ctl->ring_stride);
	return __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
}

/* Reads every record slot and the header: any fault kills the child. */
static int read_ring(void *arg)
{
	const struct ring_view *v = arg;
	const unsigned char *ring = v->base + v->ctl->ring_offset + (uint64_t)v->cpu * v->ctl->ring_stride;
	uint64_t h0 = head_of(v);
	volatile uint64_t sum = 0;
	for (uint32_t i = 0; i < v->ctl->ring_records; i++) {
		const struct hwsig_record *rec = (const void *)(ring + v->ctl->data_offset + (uint64_t)i * v->ctl->record_size);
		sum += rec->seq;
	}
	(void)sum;
	for (int i = 0; i < 100 && head_of(v) == h0; i++)
		usleep(10000);
	if (head_of(v) == h0)
		return 3;
	/* The newest record is complete and is this CPU's. */
	uint64_t last = head_of(v) - 1;
	const struct hwsig_record *rec = (const void *)(ring + v->ctl->data_offset +
							(last & (v->ctl->ring_records - 1)) * v->ctl->record_size);
	if (rec->seq != last + 1 || rec->cpu != v->cpu)
		return 4;
	return 0;
}

int case_mmap(int argc, char **argv)
{
	(void)argc; (void)argv;
	struct genl_sock s;
	struct hw_map m;
	long page = sysconf(_SC_PAGESIZE);
	if (setup_running(&s, 5000000, 64, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");

	/* PROT_EXEC: refused now and later. */
	void *x = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_SHARED, m.fd, 0);
	CHECK(x == MAP_FAILED && errno == EPERM, "mmap PROT_READ|PROT_EXEC: %s, want EPERM",
	      x == MAP_FAILED ? strerror(errno) : "mapped");
	void *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, m.fd, 0);
	CHECK(ro != MAP_FAILED, "mmap of the control page: %s", strerror(errno));
	CHECK(mprotect(ro, (size_t)page, PROT_READ | PROT_EXEC) && errno == EACCES,
	      "mprotect(PROT_EXEC) of the mapping: %s, want EACCES", strerror(errno));
	munmap(ro, (size_t)page);

	/* MADV_DONTNEED on every page, then the rings read on. */
	struct ring_view v = { m.base, m.ctl, 1 };
	CHECK(in_child(read_ring, &v) == 0, "reading CPU 1's ring before MADV_DONTNEED failed");
	CHECK(!madvise(m.base, m.size, MADV_DONTNEED), "madvise(MADV_DONTNEED): %s", strerror(errno));
	int st = in_child(read_ring, &v);
	CHECK(st == 0, "reading after MADV_DONTNEED: %s %d", WIFSIGNALED(st) ? "killed by signal" : "exit",
	      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	uint64_t h = head_of(&v);
	sleep_ms(50);
	CHECK(head_of(&v) > h, "the parent's view of CPU 1's head stopped after MADV_DONTNEED");

	/* fork: the child's inherited mapping (read_ring runs in a child). */
	v.cpu = 0;
	CHECK(in_child(read_ring, &v) == 0, "reading CPU 0's ring through the inherited mapping");

	/* mremap to another address (same size), then grow: refused. */
	void *moved = mremap(m.base, m.size, m.size, MREMAP_MAYMOVE);
	CHECK(moved != MAP_FAILED, "mremap of the mapping: %s", strerror(errno));
	m.base = moved;
	m.ctl = moved;
	struct ring_view mv = { moved, moved, 1 };
	st = in_child(read_ring, &mv);
	CHECK(st == 0, "reading through the moved mapping: status %#x", st);
	void *grown = mremap(m.base, m.size, m.size + (size_t)page, MREMAP_MAYMOVE);
	CHECK(grown == MAP_FAILED, "mremap grew the mapping");

	/* Non-zero offset: CPU 1's ring alone. */
	uint64_t off = m.ctl->ring_offset + m.ctl->ring_stride;
	size_t len = (size_t)m.ctl->ring_stride;
	const unsigned char *r1 = mmap(NULL, len, PROT_READ, MAP_SHARED, m.fd, (off_t)off);
	CHECK(r1 != MAP_FAILED, "mmap of CPU 1's ring at offset %llu: %s", (unsigned long long)off, strerror(errno));
	const struct hwsig_ring_header *h1 = (const void *)r1;
	CHECK(h1->cpu == 1 && h1->ring_set == m.ring_set && h1->ring_records == m.ctl->ring_records,
	      "the ring at offset %llu says cpu %u ring_set %llu records %u (want 1, %llu, %u)", (unsigned long long)off,
	      h1->cpu, (unsigned long long)h1->ring_set, h1->ring_records, (unsigned long long)m.ring_set,
	      m.ctl->ring_records);
	uint64_t a = __atomic_load_n(&h1->head, __ATOMIC_ACQUIRE), b = hw_head(&m, 1);
	CHECK(b >= a && b - a < 5, "the two mappings disagree on CPU 1's head: %llu vs %llu", (unsigned long long)a,
	      (unsigned long long)b);
	/* A window past the end: refused. */
	void *past = mmap(NULL, len + (size_t)page, PROT_READ, MAP_SHARED, m.fd, (off_t)(m.size - len));
	CHECK(past == MAP_FAILED && errno == EINVAL, "a window past mmap_size was mapped");
	munmap((void *)r1, len);
	hw_map_close(&m);
	genl_close(&s);
	return 0;
}
