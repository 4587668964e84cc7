// The reader's pure helpers (no BPF needed): seek folding, device names.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "hwsig/bpf_sources.h"
#include "hwsig/histogram.h"

using namespace hwsig;

namespace {

// A log2-sector seek histogram of n uniform random seeks on a device of
// `sectors` (what the BPF program would count).
Histogram uniform_random_seeks(std::uint64_t sectors, int n, unsigned seed)
{
	std::mt19937_64 rng(seed);
	std::uniform_int_distribution<std::uint64_t> pos(0, sectors - 1);
	Histogram h;
	h.counts.assign(48, 0);
	for (int i = 0; i < n; ++i) {
		std::uint64_t a = pos(rng), b = pos(rng);
		std::uint64_t gap = a > b ? a - b : b - a;
		std::size_t slot = gap <= 1 ? 0 : static_cast<std::size_t>(std::floor(std::log2(static_cast<double>(gap))));
		h.counts[slot]++;
	}
	return h;
}

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

TEST_CASE("fold_seek_octaves: top octaves kept, nearer seeks folded into slot 0", "[helpers]")
{
	Histogram h;
	h.counts.assign(48, 0);
	const std::uint64_t sectors = 1ull << 21; // top octave: slot 20
	h.counts[0] = 7;                          // sequential
	h.counts[3] = 5;                          // near
	h.counts[15] = 4;                         // 20 - 5: folded
	h.counts[16] = 3;                         // 20 - 4: first kept octave
	h.counts[20] = 2;                         // top
	Histogram f = fold_seek_octaves(h, sectors);
	REQUIRE(f.counts.size() == kSeekEntropySlots);
	CHECK(f.counts[0] == 7 + 5 + 4);
	CHECK(f.counts[1] == 3);
	CHECK(f.counts[5] == 2);
	CHECK(f.total() == h.total());
	// A device smaller than the fold: nothing lost, nothing out of range.
	Histogram tiny = fold_seek_octaves(h, 8);
	CHECK(tiny.total() == h.total());
}

TEST_CASE("pattern entropy of the folded histogram: uniform random ~0.9, sequential 0", "[helpers]")
{
	for (std::uint64_t sectors : {1ull << 19, 3ull << 20, 1ull << 31}) {
		Histogram random = uniform_random_seeks(sectors, 20000, 11);
		auto e = normalized_entropy(fold_seek_octaves(random, sectors));
		REQUIRE(e);
		INFO("device sectors " << sectors << " entropy " << *e);
		CHECK(*e > 0.8);
		// Plain log2 slots could not say "random": the reason for folding.
		auto plain = normalized_entropy(random);
		REQUIRE(plain);
		CHECK(*plain < 0.5);
	}
	Histogram seq;
	seq.counts.assign(48, 0);
	seq.counts[0] = 5000;
	auto e = normalized_entropy(fold_seek_octaves(seq, 1ull << 21));
	REQUIRE(e);
	CHECK(*e == 0.0);
}

TEST_CASE("block_dev_name and block_dev_sectors read sys/dev/block under the root", "[helpers]")
{
	TempDir root;
	std::string dir = root.path + "/sys/dev/block/7:3";
	REQUIRE(std::system(("mkdir -p '" + dir + "' '" + root.path + "/sys/dev/block/8:0'").c_str()) == 0);
	std::ofstream(dir + "/uevent") << "MAJOR=7\nMINOR=3\nDEVNAME=loop3\nDEVTYPE=disk\n";
	std::ofstream(dir + "/size") << "524288\n";
	std::ofstream(root.path + "/sys/dev/block/8:0/uevent") << "MAJOR=8\nDEVNAME=bad:name\n";
	std::ofstream(root.path + "/sys/dev/block/8:0/size") << "12x\n";
	CHECK(block_dev_name(root.path, 7, 3) == std::optional<std::string>("loop3"));
	CHECK(block_dev_sectors(root.path, 7, 3) == std::optional<std::uint64_t>(524288));
	CHECK_FALSE(block_dev_name(root.path, 8, 0));    // ':' would break the scope
	CHECK_FALSE(block_dev_sectors(root.path, 8, 0)); // garbled
	CHECK_FALSE(block_dev_name(root.path, 9, 9));    // missing
	CHECK_FALSE(block_dev_sectors(root.path, 9, 9));
}

TEST_CASE("SchedCounts: combined wait is wakeup + preemption, += adds everything", "[helpers]")
{
	SchedCounts a;
	a.wakeup_wait_us.counts = {1, 2, 3};
	a.preempt_wait_us.counts = {0, 5};
	a.involuntary = 4;
	a.switch_in = 9;
	Histogram w = a.wait_us();
	CHECK(w.counts == std::vector<std::uint64_t>{1, 7, 3});
	SchedCounts b = a;
	b += a;
	CHECK(b.wakeup_wait_us.counts == std::vector<std::uint64_t>{2, 4, 6});
	CHECK(b.preempt_wait_us.counts == std::vector<std::uint64_t>{0, 10});
	CHECK(b.involuntary == 8);
	CHECK(b.switch_in == 18);
}
