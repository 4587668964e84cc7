/* Hotplug storm: for STORM_S seconds (VMTEST_STORM_S) CPU 1 goes offline and online at
 * random while one process loops CONFIGURE (two ring sizes), START, STOP,
 * GET_STATUS (dump) and GET_INFO, and another opens and maps /dev/hwsig
 * (racing those CONFIGUREs) and reads both rings, checking every record it
 * accepts (seq, cpu, generation of a configuration that existed). Every
 * command must succeed (a dump may have to start over, never fail), every
 * mapping must be whole. Afterwards, with CPU 1 back, the module
 * configures, both CPUs sample with every entry active, and it unloads. */
#include "cases.h"
#include "common.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { STORM_S = 60 };

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static int hotplugger(void)
{
	for (int i = 0;; i++) {
		if (write_file_str("/sys/devices/system/cpu/cpu1/online", i % 2 ? "1" : "0"))
			return 20;
		usleep(rnd() % 50000);
	}
}

static int controller(void)
{
	static struct genl_reply r;
	static struct hw_status st;
	struct genl_sock s;
	struct hw_info in;
	if (hw_open(&s))
		return 30;
	for (int i = 0;; i++) {
		uint32_t ring = rnd() % 2 ? 64 : 128;
		int e = hw_configure(&s, 1000000 * (1 + rnd() % 10), ring, hw_sw_events, 3, &r);
		if (e) {
			fprintf(stderr, "storm CONFIGURE: %s \"%s\"\n", strerror(-e), r.extack);
			return 31;
		}
		if ((e = hw_start(&s, &r)))
			return fprintf(stderr, "storm START: %s\n", strerror(-e)), 32;
		usleep(rnd() % 20000);
		if ((e = hw_get_status(&s, &st, &r)) && e != -EAGAIN)
			return fprintf(stderr, "storm GET_STATUS: %s \"%s\"\n", strerror(-e), r.extack), 33;
		if ((e = hw_get_info(&s, &in, &r)))
			return fprintf(stderr, "storm GET_INFO: %s\n", strerror(-e)), 34;
		if (rnd() % 3 == 0 && (e = hw_stop(&s, &r)))
			return fprintf(stderr, "storm STOP: %s\n", strerror(-e)), 35;
	}
}

static int reader(void)
{
	static struct hw_reader rd;
	static struct hwsig_record out[128];
	for (;;) {
		struct hw_map m;
		int e = hw_map_open(&m);
		if (e)
			return fprintf(stderr, "storm map: %s\n", strerror(-e)), 40;
		if (!m.ring_set) {
			hw_map_close(&m);
			continue;
		}
		hw_reader_init_at_head(&rd, &m);
		for (int k = 0; k < 20; k++) {
			for (unsigned c = 0; c < 2; c++) {
				int n = hw_read_cpu(&rd, &m, c, out, 128);
				for (int j = 0; j < n; j++)
					if (out[j].cpu != c || out[j].seq == 0 || out[j].seq != out[j].seq_end ||
					    out[j].config_generation == 0 ||
					    out[j].config_generation > (uint32_t)m.ctl->config_generation)
						return fprintf(stderr, "storm: bad record cpu %u seq %llu gen %u\n", out[j].cpu,
							       (unsigned long long)out[j].seq, out[j].config_generation), 41;
			}
			usleep(2000);
		}
		hw_map_close(&m);
	}
}

static pid_t spawn(int (*fn)(void))
{
	pid_t p = fork();
	if (p == 0)
		_exit(fn());
	return p;
}

int case_hpstorm(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	static struct hw_status st;
	struct genl_sock s;
	CHECK(possible_cpus() >= 2, "needs 2 CPUs");
	if (setup_running(&s, 10000000, 64, hw_sw_events, 3))
		return 1;
	pid_t kids[3] = { spawn(hotplugger), spawn(controller), spawn(reader) };
	const char *names[3] = { "hotplug", "control", "reader" };
	const long storm_s = env_count("VMTEST_STORM_S", STORM_S);
	uint64_t until = now_ns() + (uint64_t)storm_s * 1000000000ull;
	int failed = -1, st_code = 0;
	while (now_ns() < until && failed < 0) {
		sleep_ms(200);
		for (int i = 0; i < 3; i++) {
			int stw;
			if (waitpid(kids[i], &stw, WNOHANG) == kids[i]) {
				failed = i;
				st_code = stw;
				kids[i] = 0;
			}
		}
	}
	for (int i = 0; i < 3; i++)
		if (kids[i]) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
	write_file_str("/sys/devices/system/cpu/cpu1/online", "1");
	CHECK(failed < 0, "the %s process ended during the storm: exit %d signal %d", names[failed < 0 ? 0 : failed],
	      WIFEXITED(st_code) ? WEXITSTATUS(st_code) : -1, WIFSIGNALED(st_code) ? WTERMSIG(st_code) : 0);

	/* After the storm: it all works. */
	int err = hw_configure(&s, 10000000, 64, hw_sw_events, 3, &r);
	CHECK(!err, "CONFIGURE after the storm: %s \"%s\"", strerror(-err), r.extack);
	CHECK_OK(hw_start(&s, &r), "START after the storm");
	struct hw_map m;
	CHECK_OK(hw_map_open(&m), "mapping after the storm");
	uint64_t h0 = hw_head(&m, 0), h1 = hw_head(&m, 1);
	sleep_ms(300);
	CHECK(hw_head(&m, 0) > h0 && hw_head(&m, 1) > h1, "after the storm: heads %llu->%llu, %llu->%llu",
	      (unsigned long long)h0, (unsigned long long)hw_head(&m, 0), (unsigned long long)h1,
	      (unsigned long long)hw_head(&m, 1));
	hw_map_close(&m);
	CHECK_OK(hw_get_status(&s, &st, &r), "GET_STATUS after the storm");
	for (unsigned c = 0; c < 2; c++)
		for (uint32_t i = 0; i < 3; i++) {
			const struct hw_status_entry *e = hw_status_find(&st, i, c);
			CHECK(e && e->error == 0, "after the storm: event %u CPU %u %s %d", i, c, e ? "error" : "missing",
			      e ? e->error : 0);
		}
	genl_close(&s);
	CHECK_OK(hw_stop_and_unload(), "unloading after the storm");
	CHECK_OK(mod_load(HWSIG_KO, ""), "loading again");
	vm_note("%d s of CPU 1 hotplug under CONFIGURE/START/STOP/GET_STATUS/GET_INFO and map/read loops", (int)storm_s);
	return 0;
}
