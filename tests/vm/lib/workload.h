/* Ground-truth workloads with a known effect on the counters. */
#ifndef VMTEST_WORKLOAD_H
#define VMTEST_WORKLOAD_H

/* Two processes pinned to cpu pass a byte back and forth over two pipes
 * round_trips times: every round trip blocks each of them once, so the
 * CPU switches context at least 2 * round_trips times. 0 or -errno. */
int pingpong_pinned(int cpu, int round_trips);

/* Spins on the calling CPU for ms milliseconds of wall time. */
void spin_ms(unsigned ms);

#endif
