// HWSIG_BPF_ATTACH: the operator's switch between the sched/block program
// sets (Documentation/bpf.rst). Pure parsing; nothing is loaded.
#include <catch2/catch.hpp>

#ifdef HWSIG_HAVE_BPF
#include <cerrno>
#include <cstdlib>

#include "attach.h"
#include "hwsig/error.h"

using hwsig::BpfAttach;
using hwsig::attach_from_environment;

namespace {
struct EnvGuard {
	explicit EnvGuard(const char *value)
	{
		if (value)
			setenv("HWSIG_BPF_ATTACH", value, 1);
		else
			unsetenv("HWSIG_BPF_ATTACH");
	}
	~EnvGuard() { unsetenv("HWSIG_BPF_ATTACH"); }
};
} // namespace

TEST_CASE("HWSIG_BPF_ATTACH turns Auto into the named program set", "[bpf][attach]")
{
	{
		EnvGuard env(nullptr);
		CHECK(attach_from_environment(BpfAttach::Auto) == BpfAttach::Auto);
	}
	{
		EnvGuard env("tp_btf");
		CHECK(attach_from_environment(BpfAttach::Auto) == BpfAttach::TpBtf);
		// An explicit choice by the caller (tests, bench) is never overridden.
		CHECK(attach_from_environment(BpfAttach::RawTp) == BpfAttach::RawTp);
	}
	{
		EnvGuard env("raw_tp");
		CHECK(attach_from_environment(BpfAttach::Auto) == BpfAttach::RawTp);
	}
	{
		EnvGuard env("auto");
		CHECK(attach_from_environment(BpfAttach::Auto) == BpfAttach::Auto);
	}
	{
		EnvGuard env("");
		CHECK(attach_from_environment(BpfAttach::Auto) == BpfAttach::Auto);
	}
}

TEST_CASE("HWSIG_BPF_ATTACH with another value is an error naming it", "[bpf][attach]")
{
	EnvGuard env("fentry");
	try {
		attach_from_environment(BpfAttach::Auto);
		FAIL("no error for HWSIG_BPF_ATTACH=fentry");
	} catch (const hwsig::Error &e) {
		CHECK(e.err() == EINVAL);
		CHECK(std::string(e.what()).find("HWSIG_BPF_ATTACH=fentry") != std::string::npos);
		CHECK(std::string(e.what()).find("tp_btf, raw_tp or auto") != std::string::npos);
	}
}
#endif
