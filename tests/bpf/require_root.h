// Every live BPF test starts with this: without root nothing can be loaded,
// and the test must fail with the reason rather than pass vacuously.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>

namespace hwsig_test {

inline void require_root()
{
	if (geteuid() != 0)
		FAIL("live BPF tests need root (CAP_BPF+CAP_PERFMON): run as root");
}

} // namespace hwsig_test
