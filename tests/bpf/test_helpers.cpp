// The reader's pure helpers (no BPF needed): device names, count sums.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "hwsig/block_device.h"
#include "hwsig/histogram.h"
#include "sched_collector.h"

using namespace hwsig;

namespace {

struct TempDir {
	std::string path;
	TempDir()
	{
		char tmpl[] = "/tmp/hwsig-bpf-helpers-XXXXXX";
		REQUIRE(mkdtemp(tmpl));
		path = tmpl;
	}
	~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

} // namespace

TEST_CASE("block_dev_name reads sys/dev/block/M:m/uevent under the root", "[helpers]")
{
	TempDir root;
	std::string dir = root.path + "/sys/dev/block/7:3";
	REQUIRE(std::system(("mkdir -p '" + dir + "' '" + root.path + "/sys/dev/block/8:0'").c_str()) == 0);
	std::ofstream(dir + "/uevent") << "MAJOR=7\nMINOR=3\nDEVNAME=loop3\nDEVTYPE=disk\n";
	std::ofstream(root.path + "/sys/dev/block/8:0/uevent") << "MAJOR=8\nDEVNAME=bad:name\n";
	CHECK(block_dev_name(root.path, 7, 3) == std::optional<std::string>("loop3"));
	CHECK_FALSE(block_dev_name(root.path, 8, 0));    // ':' would break the scope
	CHECK_FALSE(block_dev_name(root.path, 9, 9));    // missing
}

TEST_CASE("SchedCounts: combined wait is wakeup + preemption, += adds everything", "[helpers]")
{
	SchedCounts a;
	a.wakeup_wait_us.counts = {1, 2, 3};
	a.preempt_wait_us.counts = {0, 5};
	a.involuntary = 4;
	a.runs = 9;
	Histogram w = a.wait_us();
	CHECK(w.counts == std::vector<std::uint64_t>{1, 7, 3});
	SchedCounts b = a;
	b += a;
	CHECK(b.wakeup_wait_us.counts == std::vector<std::uint64_t>{2, 4, 6});
	CHECK(b.preempt_wait_us.counts == std::vector<std::uint64_t>{0, 10});
	CHECK(b.involuntary == 8);
	CHECK(b.runs == 18);
}
