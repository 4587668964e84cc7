/* nohz_full and isolated CPUs (big boot: isolcpus=63 nohz_full=64). By
 * default hwsig neither opens counters nor starts a timer there: their
 * GET_STATUS entries say -ECANCELED and their rings do not move while the
 * others do. With HWSIG_CONFIG_F_ISOLATED_CPUS they are sampled like every
 * other CPU, and GET_INFO reports the flag. An unknown flag is refused. */
#include "cases.h"
#include "common.h"

#include <stdlib.h>

static int check_cpu(struct genl_sock *s, struct hw_map *m, unsigned cpu, int sampled)
{
	static struct genl_reply r;
	static struct hw_status st;
	CHECK_OK(hw_get_status(s, &st, &r), "GET_STATUS");
	for (uint32_t i = 0; i < 3; i++) {
		const struct hw_status_entry *e = hw_status_find(&st, i, cpu);
		CHECK(e, "no entry for event %u on CPU %u", i, cpu);
		CHECK(e->error == (sampled ? 0 : -ECANCELED), "event %u on CPU %u: error %d, want %d", i, cpu, e->error,
		      sampled ? 0 : -ECANCELED);
	}
	uint64_t h = hw_head(m, cpu), h0 = hw_head(m, 0);
	/* 65 vCPUs under TCG: a 100 ms interval, half a second of it. */
	sleep_ms(500);
	CHECK(hw_head(m, 0) > h0, "CPU 0 stopped sampling");
	if (sampled)
		CHECK(hw_head(m, cpu) > h, "CPU %u is not sampled with the flag (head %llu)", cpu, (unsigned long long)h);
	else
		CHECK(hw_head(m, cpu) == 0 && !hw_ring(m, cpu)->online, "CPU %u got records (head %llu) without the flag",
		      cpu, (unsigned long long)hw_head(m, cpu));
	return 0;
}

int case_isolated(int argc, char **argv)
{
	(void)argc; (void)argv;
	static struct genl_reply r;
	struct genl_sock s;
	struct hw_map m;
	struct hw_info in;
	char iso[64], nohz[64];
	CHECK_OK(read_file_str("/sys/devices/system/cpu/isolated", iso, sizeof(iso)), "reading isolated");
	CHECK_OK(read_file_str("/sys/devices/system/cpu/nohz_full", nohz, sizeof(nohz)), "reading nohz_full");
	CHECK(atoi(iso) == 63 && atoi(nohz) == 64, "isolated \"%s\", nohz_full \"%s\": want 63 and 64 (big boot)", iso, nohz);

	if (setup_running(&s, 100000000, 64, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_map_open(&m), "mapping");
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO");
	CHECK(in.config_flags == 0, "GET_INFO flags %#x, want 0", in.config_flags);
	if (check_cpu(&s, &m, 63, 0) || check_cpu(&s, &m, 64, 0) || check_cpu(&s, &m, 1, 1))
		return 1;
	hw_map_close(&m);

	int err = hw_configure_flags(&s, 100000000, 64, hw_sw_events, 3, HWSIG_CONFIG_F_ISOLATED_CPUS, &r);
	CHECK(!err, "CONFIGURE with HWSIG_CONFIG_F_ISOLATED_CPUS: %s \"%s\"", strerror(-err), r.extack);
	CHECK_OK(hw_map_open(&m), "mapping");
	CHECK_OK(hw_get_info(&s, &in, &r), "GET_INFO");
	CHECK(in.config_flags == HWSIG_CONFIG_F_ISOLATED_CPUS, "GET_INFO flags %#x", in.config_flags);
	if (check_cpu(&s, &m, 63, 1) || check_cpu(&s, &m, 64, 1))
		return 1;
	hw_map_close(&m);

	err = hw_configure_flags(&s, 100000000, 64, hw_sw_events, 3, 0x80, &r);
	CHECK(err == -EINVAL && r.extack[0], "an unknown flag: %s \"%s\", want EINVAL with a message", strerror(-err),
	      r.extack);
	genl_close(&s);
	return 0;
}
