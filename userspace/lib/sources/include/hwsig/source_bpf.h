// The BPF sources: bpf.sched, bpf.block and bpf.vhost. Each attaches its
// collector (bpf/*_collector.h) lazily on the first collect(); without root,
// BPF or (vhost) vhost_net, it reports its metrics unavailable and why.
#pragma once

#include <memory>
#include <vector>

#include "hwsig/source.h"

namespace hwsig {

// Series bpf.runq_* and bpf.involuntary_switches at cpu:N, system, vm:NAME
// (the discovered VMs) and pid:N for each pid given. milliseconds: the wait
// histograms in log2 ms slots instead of us (hwsigctl hist -m; the series
// keep their names).
SourcePtr make_bpf_sched_source();
SourcePtr make_bpf_sched_source(std::vector<int> pids, bool milliseconds = false);

// Series bpf.io_* at dev:NAME (the seek histogram in full log2 sector
// slots; io.pattern_entropy folds it in derive).
SourcePtr make_bpf_block_source();
// The same with the latency and queue histograms in log2 ms slots.
SourcePtr make_bpf_block_source(bool milliseconds);
// Block requests per VM, by the QEMU process that submitted them
// (bpf/vmio.bpf.c): io.* series at vm:NAME and vm:NAME/dev:NAME. Loads its
// programs only once a VM is listed.
SourcePtr make_bpf_vmio_source();

// Series bpf.vhost_* at vq:<pid>:<index>:<rx|tx>, vm:NAME and system
// (hwsig/vhost.h, Documentation/vhost.rst). Attaches only once vhost_net is
// loaded (checked cheaply at every collect until then: "vhost not loaded");
// re-attaches when the module is reloaded.
SourcePtr make_bpf_vhost_source();
// The same, forcing one program set (tests): VhostAttach is defined with
// the collector in bpf/vhost_collector.h.
enum class VhostAttach;
SourcePtr make_bpf_vhost_source(VhostAttach how);

// Every vCPU thread's scheduler accounting in one pass of a BPF task
// iterator (bpf/vcpu.bpf.c), for make_schedstat_source(); throws
// hwsig::Error when it cannot load.
class TaskSchedReader;
std::unique_ptr<TaskSchedReader> open_bpf_task_sched_reader();

} // namespace hwsig
