#ifndef VMTEST_COMMON_H
#define VMTEST_COMMON_H

#include <errno.h>
#include <string.h>

#include "check.h"
#include "hwsig_client.h"

/* Fresh module, configured and started; 0 or 1 with the reason recorded. */
int setup_running(struct genl_sock *s, uint64_t interval_ns, uint32_t ring_records,
		  const struct hw_event_spec *ev, int n);
/* Number of CPUs in /sys/devices/system/cpu/possible ("0-1" -> 2). */
int possible_cpus(void);
int cpu_online(int cpu);
/* A count from the environment (a positive integer), else def: the debug
 * kernel's tier (scripts/vm-test-debug) lowers the long cases' counts with
 * VMTEST_FUZZ_MSGS and VMTEST_STORM_S on the kernel command line, which the
 * kernel hands to init as environment variables. */
long env_count(const char *name, long def);
/* Records of one CPU since rd's tail, into a static buffer of ring size. */
struct hwsig_record *read_all(struct hw_reader *rd, const struct hw_map *m, unsigned cpu, int *n);

#endif
