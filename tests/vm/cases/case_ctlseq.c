/* The control page's sequence count and ring-set stamps: every publish
 * (CONFIGURE, START, STOP) moves seq by exactly 2 and leaves it even;
 * ring_set names the rings a new mmap() gets, and every ring header of
 * that set carries it with its ring_records; a new geometry is a new set
 * (the old mapping's headers keep the old stamp, so a reader can tell),
 * the same geometry keeps it. Then a reader maps over and over while
 * another process reconfigures between two geometries: every mapping
 * hw_map_open accepts is whole and of one ring set. */
#include "cases.h"
#include "common.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t seq_of(const struct hw_map *m)
{
	return __atomic_load_n(&m->ctl->seq, __ATOMIC_ACQUIRE);
}

int case_ctlseq(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_map m, m2;
	long page = sysconf(_SC_PAGESIZE);

	if (setup_running(&s, 10000000, 64, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_map_open(&m), "mapping");
	uint64_t s0 = seq_of(&m);
	CHECK(s0 && !(s0 & 1), "seq %llu: want even and non-zero after CONFIGURE and START", (unsigned long long)s0);
	CHECK_OK(hw_stop(&s, &r), "STOP");
	CHECK(seq_of(&m) == s0 + 2, "STOP moved seq %llu -> %llu, want +2", (unsigned long long)s0,
	      (unsigned long long)seq_of(&m));
	CHECK_OK(hw_start(&s, &r), "START");
	CHECK(seq_of(&m) == s0 + 4, "START moved seq to %llu, want %llu", (unsigned long long)seq_of(&m),
	      (unsigned long long)s0 + 4);
	uint64_t set1 = m.ctl->ring_set;
	CHECK(set1 && set1 == m.ring_set, "ring_set %llu, the mapping's %llu", (unsigned long long)set1,
	      (unsigned long long)m.ring_set);
	int ncpu = possible_cpus();
	for (int c = 0; c < ncpu; c++) {
		const struct hwsig_ring_header *h = hw_ring(&m, (unsigned)c);
		CHECK(h->ring_set == set1 && h->ring_records == 64 && h->cpu == (uint32_t)c,
		      "CPU %d's header: ring_set %llu records %u cpu %u", c, (unsigned long long)h->ring_set,
		      h->ring_records, h->cpu);
	}
	/* Same geometry: same rings. */
	CHECK_OK(hw_configure(&s, 10000000, 64, hw_sw_events, 3, &r), "CONFIGURE, same ring size");
	CHECK(seq_of(&m) == s0 + 6 && m.ctl->ring_set == set1, "same geometry: seq %llu ring_set %llu (was %llu)",
	      (unsigned long long)seq_of(&m), (unsigned long long)m.ctl->ring_set, (unsigned long long)set1);
	/* New geometry: a new set; the old mapping's headers say so. */
	CHECK_OK(hw_configure(&s, 10000000, 128, hw_sw_events, 3, &r), "CONFIGURE, new ring size");
	CHECK(m.ctl->ring_set > set1 && hw_ring(&m, 0)->ring_set == set1,
	      "new geometry: control ring_set %llu, old mapping's header %llu (was %llu)",
	      (unsigned long long)m.ctl->ring_set, (unsigned long long)hw_ring(&m, 0)->ring_set,
	      (unsigned long long)set1);
	hw_map_close(&m);
	CHECK_OK(hw_map_open(&m2), "mapping the new rings");
	CHECK(hw_ring(&m2, 0)->ring_set == m2.ctl->ring_set && hw_ring(&m2, 0)->ring_records == 128,
	      "the new mapping: header ring_set %llu records %u", (unsigned long long)hw_ring(&m2, 0)->ring_set,
	      hw_ring(&m2, 0)->ring_records);
	hw_map_close(&m2);

	/* Reconfigure in a loop in a child while mapping here. */
	pid_t pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct genl_sock cs;
		static struct genl_reply cr;
		if (hw_open(&cs))
			_exit(1);
		for (int i = 0;; i++)
			if (hw_configure(&cs, 10000000, (i & 1) ? 64 : 128, hw_sw_events, 3, &cr))
				_exit(2);
	}
	int maps = 0, remaps = 0, bad = 0;
	uint64_t until = now_ns() + 3000000000ull;
	while (now_ns() < until && !bad) {
		int e = hw_map_open(&m);
		if (e) {
			vm_fail(__FILE__, __LINE__, "hw_map_open during reconfiguration: %s", strerror(-e));
			bad = 1;
			break;
		}
		maps++;
		remaps += m.remaps;
		const struct hwsig_ring_header *h0 = hw_ring(&m, 0);
		uint64_t stride = ((uint64_t)page + (uint64_t)h0->ring_records * sizeof(struct hwsig_record) + (uint64_t)page - 1) /
				  (uint64_t)page * (uint64_t)page;
		if (h0->ring_set != m.ring_set ||
		    m.size != (size_t)page + (size_t)m.ctl->nr_cpu_ids * stride) {
			vm_fail(__FILE__, __LINE__, "mapping of %zu bytes holds ring set %llu of %u records, accepted as %llu",
				m.size, (unsigned long long)h0->ring_set, h0->ring_records, (unsigned long long)m.ring_set);
			bad = 1;
		}
		hw_map_close(&m);
	}
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	CHECK(!WIFEXITED(st), "the reconfiguring child failed (exit %d)", WEXITSTATUS(st));
	if (bad)
		return 1;
	CHECK(maps > 10, "only %d mappings in 3 s", maps);
	vm_note("seq +2 per publish; %d mappings during reconfiguration, %d mapped again after a stale copy", maps, remaps);
	genl_close(&s);
	return 0;
}
