// hwsig::Skeleton: a classic tracepoint program gets tracefs mounted first;
// failures name the program, the step and errno.
#include <catch2/catch.hpp>

#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <stdexcept>

#include "empty.skel.h"
#include "skeleton.h"

namespace {

constexpr long kTracefsMagic = 0x74726163;

const hwsig::SkeletonOps<hwsig_empty_bpf> kOps = {"empty", hwsig_empty_bpf__open_opts, hwsig_empty_bpf__load,
						  hwsig_empty_bpf__attach, hwsig_empty_bpf__destroy};

// Loads just `keep`; the task-storage map only the bench's tp_btf program
// uses is not created either.
void only(hwsig_empty_bpf &s, struct bpf_program *keep)
{
	struct bpf_program *p;
	bpf_object__for_each_program(p, s.obj) bpf_program__set_autoload(p, p == keep);
	bpf_map__set_autocreate(s.maps.empty_task_state, false);
}

bool tracefs_mounted()
{
	struct statfs st {};
	return statfs("/sys/kernel/tracing", &st) == 0 && st.f_type == kTracefsMagic;
}

} // namespace

TEST_CASE("Skeleton: a classic tracepoint program loads with tracefs mounted for it", "[skeleton]")
{
	if (geteuid() != 0)
		FAIL("live BPF tests need root (CAP_BPF+CAP_PERFMON): run as root");
	bool was_mounted = tracefs_mounted();
	INFO("tracefs mounted before: " << was_mounted);
	hwsig::Skeleton<hwsig_empty_bpf> skel(kOps, [](hwsig_empty_bpf &s) {
		only(s, s.progs.empty_tracepoint_sched_switch);
	});
	CHECK(skel);
	CHECK(tracefs_mounted());
	// The event id libbpf attached through is there.
	std::ifstream id("/sys/kernel/tracing/events/sched/sched_switch/id");
	int n = 0;
	CHECK((id >> n));
	CHECK(n > 0);
}

TEST_CASE("Skeleton: a failing step throws with the program, the step and errno", "[skeleton]")
{
	if (geteuid() != 0)
		FAIL("live BPF tests need root (CAP_BPF+CAP_PERFMON): run as root");
	// The kernel refuses a sleepable raw_tp program: load fails.
	try {
		hwsig::Skeleton<hwsig_empty_bpf> skel(kOps, [](hwsig_empty_bpf &s) {
			only(s, s.progs.empty_sched_switch);
			bpf_program__set_flags(s.progs.empty_sched_switch, BPF_F_SLEEPABLE);
		});
		FAIL("a sleepable raw_tp program loaded");
	} catch (const hwsig::Error &e) {
		std::string what = e.what();
		INFO(what);
		CHECK(what.find("BPF empty: ") == 0);
		CHECK(what.find("BPF empty: load") == 0);
		CHECK(e.err() == EINVAL);
		CHECK(what.find("rejected") != std::string::npos); // the hint for EINVAL
	}
	// configure() throwing destroys the half-built skeleton and passes through.
	CHECK_THROWS_AS(hwsig::Skeleton<hwsig_empty_bpf>(kOps, [](hwsig_empty_bpf &) { throw std::runtime_error("x"); }),
			std::runtime_error);
}
