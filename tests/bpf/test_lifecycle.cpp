// Attach/detach hygiene and the unprivileged path.
#include <catch2/catch.hpp>

#include <bpf/bpf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "require_root.h"
#include "as_nobody.h"
#include "block_collector.h"
#include "hwsig/source_bpf.h"
#include "sched_collector.h"

using namespace hwsig;
using hwsig_test::require_root;

namespace {

template <typename Next> std::size_t count_ids(Next next)
{
	std::size_t n = 0;
	__u32 id = 0;
	while (next(id, &id) == 0)
		++n;
	return n;
}

std::size_t prog_count()
{
	return count_ids(bpf_prog_get_next_id);
}

std::size_t map_count()
{
	return count_ids(bpf_map_get_next_id);
}

// Detached programs and maps are freed after an RCU grace period (and a
// workqueue): wait until the counts come down to `want` (or stop falling).
std::pair<std::size_t, std::size_t> settled_counts(std::size_t want_progs, std::size_t want_maps)
{
	std::pair<std::size_t, std::size_t> now{prog_count(), map_count()};
	for (int i = 0; i < 100 && (now.first > want_progs || now.second > want_maps); ++i) {
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
		now = {prog_count(), map_count()};
	}
	return now;
}

} // namespace

TEST_CASE("attach, detach, re-attach 20 times: no leaked programs or maps", "[lifecycle]")
{
	require_root();
	// The first attach may create kernel-side objects that outlive it
	// (none known, but do not let them count as a leak of the loop).
	{
		SchedCollector s;
		BlockCollector b;
	}
	auto [progs, maps] = settled_counts(0, 0);
	std::size_t during_progs = 0;
	for (int i = 0; i < 20; ++i) {
		SchedCollector s(i % 2 ? BpfAttach::RawTp : BpfAttach::TpBtf);
		BlockCollector b(i % 2 ? BpfAttach::RawTp : BpfAttach::TpBtf);
		s.select(getpid());
		during_progs = prog_count();
	}
	CHECK(during_progs >= progs + 5); // 3 sched + 2 block (complete, its issue fallback) programs were loaded
	auto [progs_after, maps_after] = settled_counts(progs, maps);
	CHECK(progs_after == progs);
	CHECK(maps_after == maps);
}

TEST_CASE("without privileges: metrics unavailable with the reason, nothing thrown", "[lifecycle]")
{
	require_root();
	auto [status, text] = hwsig::test::run_as_nobody([] {
		std::string out;
		std::vector<SourcePtr> sources;
		sources.push_back(make_bpf_sched_source());
		sources.push_back(make_bpf_block_source());
		for (auto &src : sources) {
			Snapshot snap;
			src->collect(SourceContext{}, snap);
			for (const auto &note : snap.unavailable())
				out += note.id + "|" + note.reason + "\n";
			out += "series=" + std::to_string(snap.histograms().size() + snap.counters().size()) + "\n";
		}
		return out;
	});
	INFO(text);
	REQUIRE(WIFEXITED(status));
	REQUIRE(WEXITSTATUS(status) == 0);
	CHECK(text.rfind("threw: ", 0) == std::string::npos);
	for (const char *id : {"sched.runq_wait_p50_us", "sched.runq_wait_p99_us", "sched.involuntary_ctxsw_ps",
			       "io.iops_read", "io.iops_write", "io.latency_p50_us", "io.latency_p99_us",
			       "io.queue_p50_us", "io.queue_p99_us", "io.pattern_entropy"}) {
		// The one thing to do, not libbpf's probe text (RLIMIT_MEMLOCK...).
		std::string line = std::string(id) + "|needs root (CAP_BPF and CAP_PERFMON)\n";
		CHECK(text.find(line) != std::string::npos);
	}
	CHECK(text.find("RLIMIT_MEMLOCK") == std::string::npos);
	CHECK(text.find("libbpf") == std::string::npos);
	// No made-up numbers: nothing was emitted.
	std::size_t empty_snapshots = 0;
	for (std::size_t at = 0; (at = text.find("series=0\n", at)) != std::string::npos; ++at)
		++empty_snapshots;
	CHECK(empty_snapshots == 2);
}
