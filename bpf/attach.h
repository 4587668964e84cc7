// Which program set the sched and block collectors load: tp_btf (BTF-typed,
// task storage) when the kernel has it, else raw_tp.
#pragma once

#include <utility>

#include "hwsig/error.h"
#include "skeleton.h"

namespace hwsig {

// Forcing one set is for tests and benchmarks.
enum class BpfAttach { Auto, TpBtf, RawTp };
const char *attach_name(BpfAttach how);
// Auto, unless the environment's HWSIG_BPF_ATTACH says tp_btf or raw_tp:
// how an operator (or a test) forces the sched and block program sets
// without a rebuild. Any other value throws hwsig::Error (EINVAL).
BpfAttach attach_from_environment(BpfAttach how);

namespace bpf_detail {

// Loads one program set: `how` after HWSIG_BPF_ATTACH; Auto loads tp_btf
// when tp_btf_usable() says the kernel has what it needs, and falls back to
// raw_tp when that fails for any reason but missing privileges.
// load(BpfAttach) returns the Skeleton; the result says which set it holds.
template <typename Usable, typename Load>
auto load_tp_btf_or_raw_tp(BpfAttach how, Usable &&tp_btf_usable, Load &&load)
	-> std::pair<decltype(load(BpfAttach::TpBtf)), BpfAttach>
{
	how = attach_from_environment(how);
	if (how == BpfAttach::Auto) {
		if (tp_btf_usable()) {
			try {
				return {load(BpfAttach::TpBtf), BpfAttach::TpBtf};
			} catch (const Error &e) {
				// No permission will not get better with raw_tp.
				if (lacks_privilege(e.err()))
					throw;
			}
		}
		how = BpfAttach::RawTp;
	}
	return {load(how), how};
}

} // namespace bpf_detail

} // namespace hwsig
