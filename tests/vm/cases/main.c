/* vmcase: one binary, one case per invocation (`vmcase NAME`), so a case
 * that crashes or hangs takes only itself down. Prints the verdict line
 * "vmtest: PASS NAME" or "vmtest: FAIL NAME: why"; exit status 0 on pass. */
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
