// Kernel features from its BTF and libbpf_probe_*().
#include "trace_helpers.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <memory>
#include <string>

#include "hwsig/error.h"

namespace hwsig::bpf_detail {

namespace {

struct BtfFree {
	void operator()(struct btf *b) const { btf__free(b); }
};

// The func_proto behind typedef btf_trace_<tp> (a pointer to it).
const struct btf_type *tp_proto(const struct btf *btf, const char *tracepoint)
{
	std::string name = std::string("btf_trace_") + tracepoint;
	int id = btf__find_by_name_kind(btf, name.c_str(), BTF_KIND_TYPEDEF);
	if (id <= 0)
		return nullptr;
	const struct btf_type *t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : nullptr; // typedef -> ptr
	if (!t || !btf_is_ptr(t))
		return nullptr;
	t = btf__type_by_id(btf, t->type); // ptr -> func_proto
	return t && btf_is_func_proto(t) ? t : nullptr;
}

} // namespace

bool has_tp_btf(const char *tracepoint)
{
	return tp_btf_arg_count(tracepoint) >= 0;
}

int tp_btf_arg_count(const char *tracepoint)
{
	std::unique_ptr<struct btf, BtfFree> btf(btf__load_vmlinux_btf());
	if (!btf)
		return -1;
	const struct btf_type *proto = tp_proto(btf.get(), tracepoint);
	if (!proto)
		return -1;
	return static_cast<int>(btf_vlen(proto)) - 1;
}

bool has_task_storage()
{
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, nullptr) == 1;
}

bool has_kfunc(const char *name)
{
	std::unique_ptr<struct btf, BtfFree> btf(btf__load_vmlinux_btf());
	return btf && btf__find_by_name_kind(btf.get(), name, BTF_KIND_FUNC) > 0;
}

int possible_cpus(std::string_view name)
{
	int n = libbpf_num_possible_cpus();
	if (n <= 0)
		throw Error("BPF " + std::string(name) + ": counting possible CPUs", -n);
	return n;
}

} // namespace hwsig::bpf_detail
