// What the running kernel offers, read from its BTF and libbpf_probe_*()
// (the counterpart of libbpf-tools' trace_helpers).
#pragma once

#include <string_view>

namespace hwsig::bpf_detail {

// Whether the kernel BTF has btf_trace_<tracepoint> (so tp_btf can attach).
bool has_tp_btf(const char *tracepoint);
// Number of arguments of the tracepoint's BTF prototype (without the
// leading void *), or -1 when unknown.
int tp_btf_arg_count(const char *tracepoint);
bool has_task_storage();
// Whether the kernel's BTF has kfunc `name` (a BTF FUNC of that name).
bool has_kfunc(const char *name);
// Possible CPUs (the length of a per-CPU map value); throws hwsig::Error
// "BPF <name>: counting possible CPUs" when libbpf cannot tell.
int possible_cpus(std::string_view name);

} // namespace hwsig::bpf_detail
