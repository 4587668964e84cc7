/* vmcase: one binary, one case per invocation (`vmcase NAME`), so a case
 * that crashes or hangs takes only itself down. Prints the verdict line
 * "vmtest: PASS NAME" or "vmtest: FAIL NAME: why"; exit status 0 on pass. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cases.h"
#include "check.h"
#include "hwsig_client.h"

static const struct vm_case cases[] = {
	{ "version", case_version },
	{ "software-events", case_software },
	{ "hardware-events", case_hardware },
	{ "one-cpu-event", case_onecpu },
	{ "tiny-ring-loss", case_loss },
	{ "bad-config", case_badconfig },
	{ "unprivileged", case_unpriv },
	{ "rmmod-busy", case_rmmod },
	{ "load-cycles", case_cycles },
	{ "cpu-hotplug", case_hotplug },
	{ "two-readers", case_readers },
	{ "reconfigure-mapped", case_reconfig },
	{ "confused-deputy", case_deputy },
	{ "worker-credentials", case_creds },
	{ "ring-cap", case_ringcap },
	{ "mmap-semantics", case_mmap },
	{ "control-seq", case_ctlseq },
	{ "ebusy-retry", case_ebusy },
	{ "stop-disables", case_stopcount },
	{ "hybrid-offline-pmu", case_hybrid },
	{ "status-many-cpus", case_bigstatus },
	{ "isolated-cpus", case_isolated },
	{ "status-hotplug-race", case_statusrace },
	{ "reconcile-housekeeping", case_reconcilecpu },
	{ "netlink-fuzz", case_fuzz },
	{ "hotplug-storm", case_hpstorm },
	{ "bench", case_bench },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (strcmp(cases[i].name, "bench"))
				puts(cases[i].name);
		return 0;
	}
	/* For shell cases: START or STOP alone (the configuration and the
	 * rings' heads stay). */
	if (argc == 3 && !strcmp(argv[1], "--ctl")) {
		static struct genl_reply r;
		struct genl_sock s;
		if (hw_open(&s))
			return 1;
		int e = !strcmp(argv[2], "start") ? hw_start(&s, &r) : !strcmp(argv[2], "stop") ? hw_stop(&s, &r) : -EINVAL;
		if (e)
			fprintf(stderr, "vmcase --ctl %s: %s\n", argv[2], strerror(-e));
		return e ? 1 : 0;
	}
	/* For shell cases: the module's own loss accounting, as
	 * "status written W overwritten O" (GET_STATUS, all CPUs) and one
	 * "ring C head H overwritten O" per CPU id (the ring headers). */
	if (argc == 3 && !strcmp(argv[1], "--state") && !strcmp(argv[2], "accounting")) {
		static struct genl_reply r;
		static struct hw_status st;
		struct genl_sock s;
		struct hw_map m;
		if (hw_open(&s) || hw_get_status(&s, &st, &r) || !st.have_written || !st.have_overwritten)
			return 1;
		if (hw_map_open(&m))
			return 1;
		printf("status written %llu overwritten %llu running %u\n", (unsigned long long)st.records_written,
		       (unsigned long long)st.records_overwritten, st.running);
		for (unsigned c = 0; c < m.ctl->nr_cpu_ids; c++)
			printf("ring %u head %llu overwritten %llu\n", c, (unsigned long long)hw_head(&m, c),
			       (unsigned long long)hw_ring(&m, c)->overwritten);
		hw_map_close(&m);
		return 0;
	}
	/* For shell cases: one GET_INFO field (abi, running, interval). */
	if (argc == 3 && !strcmp(argv[1], "--state")) {
		static struct genl_reply r;
		struct genl_sock s;
		struct hw_info in;
		if (hw_open(&s) || hw_get_info(&s, &in, &r))
			return 1;
		if (!strcmp(argv[2], "abi"))
			printf("%u\n", in.abi_version);
		else if (!strcmp(argv[2], "running"))
			printf("%u\n", in.running);
		else if (!strcmp(argv[2], "interval"))
			printf("%llu\n", (unsigned long long)in.sample_interval_ns);
		else
			return 2;
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: vmcase --list | vmcase NAME [ARGS]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, argv[1]))
			continue;
		int rc = cases[i].run(argc - 1, argv + 1);
		if (rc == 0 && !vm_why()[0]) {
			printf("vmtest: PASS %s\n", argv[1]);
			return 0;
		}
		printf("vmtest: FAIL %s: %s\n", argv[1], vm_why()[0] ? vm_why() : "failed without a reason");
		return 1;
	}
	printf("vmtest: FAIL %s: no such case\n", argv[1]);
	return 1;
}
