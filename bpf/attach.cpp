// HWSIG_BPF_ATTACH and the names of the sched/block program sets.
#include "attach.h"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>

namespace hwsig {

const char *attach_name(BpfAttach how)
{
	switch (how) {
	case BpfAttach::TpBtf:
		return "tp_btf";
	case BpfAttach::RawTp:
		return "raw_tp";
	default:
		return "auto";
	}
}

BpfAttach attach_from_environment(BpfAttach how)
{
	const char *env = std::getenv("HWSIG_BPF_ATTACH");
	if (how != BpfAttach::Auto || !env || !*env || std::string_view(env) == "auto")
		return how;
	if (std::string_view(env) == "tp_btf")
		return BpfAttach::TpBtf;
	if (std::string_view(env) == "raw_tp")
		return BpfAttach::RawTp;
	throw Error(std::string("HWSIG_BPF_ATTACH=") + env + ": want tp_btf, raw_tp or auto", EINVAL);
}

} // namespace hwsig
