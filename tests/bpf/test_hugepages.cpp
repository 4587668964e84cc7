// mem.hugepage_utilization against this kernel with a known pool: surplus
// (overcommitted) pages reserved by a mapping, some of them touched. The
// kernel's nr_hugepages already counts surplus pages; adding
// surplus_hugepages again would skew the ratio. Not BPF, but live on the
// host as root like the rest of this tier.
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "hwsig/procfs.h"
#include "hwsig/series.h"
#include "hwsig/snapshot.h"
#include "require_root.h"

using namespace hwsig;

namespace {

const std::string kPool = "/sys/kernel/mm/hugepages/hugepages-2048kB/";
constexpr std::size_t kPage = 2u << 20;

std::string read_pool(const std::string &file)
{
	std::ifstream in(kPool + file);
	std::string v;
	in >> v;
	return v;
}

bool write_pool(const std::string &file, const std::string &value)
{
	std::ofstream out(kPool + file);
	out << value << "\n";
	out.flush();
	return static_cast<bool>(out);
}

// Puts nr_hugepages and nr_overcommit_hugepages back as they were.
struct PoolRestore {
	std::string nr = read_pool("nr_hugepages"), overcommit = read_pool("nr_overcommit_hugepages");
	~PoolRestore()
	{
		write_pool("nr_overcommit_hugepages", overcommit);
		write_pool("nr_hugepages", nr);
	}
};

} // namespace

namespace {

double utilization()
{
	auto source = make_meminfo_source();
	Snapshot snap;
	SourceContext ctx;
	source->collect(ctx, snap);
	const double *util = snap.gauge(series::kHugepageUtilization, "hugepages:2048kB");
	return util ? *util : -1;
}

// A private anonymous mapping of n huge pages: reserved at mmap, faulted
// in page by page when touched.
struct HugeMapping {
	explicit HugeMapping(std::size_t n) : size(n * kPage)
	{
		addr = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	}
	~HugeMapping()
	{
		if (addr != MAP_FAILED)
			::munmap(addr, size);
	}
	void touch(std::size_t page) { static_cast<char *>(addr)[page * kPage] = 1; }
	std::size_t size;
	void *addr;
};

} // namespace

// Reserved pages (QEMU's guest memory before the guest touches it) are in
// use; surplus pages are already in nr_hugepages.
TEST_CASE("meminfo source on this host: reserved and surplus huge pages", "[hugepages][source]")
{
	hwsig_test::require_root();
	REQUIRE(!read_pool("nr_hugepages").empty()); // a kernel with 2 MiB HugeTLB pages
	PoolRestore restore;
	REQUIRE(restore.nr == "0"); // the host's own pool untouched: this test needs it empty
	auto pool = [] {
		return "nr " + read_pool("nr_hugepages") + ", free " + read_pool("free_hugepages") + ", resv " +
		       read_pool("resv_hugepages") + ", surplus " + read_pool("surplus_hugepages");
	};

	SECTION("persistent pool: 4 pages, 2 reserved by a mapping, 1 of them touched")
	{
		REQUIRE(write_pool("nr_hugepages", "4"));
		REQUIRE(read_pool("nr_hugepages") == "4");
		HugeMapping map(2);
		INFO("mmap of 2 huge pages: " << (map.addr == MAP_FAILED ? std::strerror(errno) : "ok"));
		REQUIRE(map.addr != MAP_FAILED);
		map.touch(0);
		INFO(pool());
		CHECK(read_pool("free_hugepages") == "3");
		CHECK(read_pool("resv_hugepages") == "1");
		CHECK(utilization() == Approx(2.0 / 4)); // free - reserved = 2 pages unused
	}
	SECTION("surplus pages only: 3 reserved by a mapping, 1 touched")
	{
		REQUIRE(write_pool("nr_overcommit_hugepages", "4"));
		{
			HugeMapping map(3);
			INFO("mmap of 3 huge pages: " << (map.addr == MAP_FAILED ? std::strerror(errno) : "ok"));
			REQUIRE(map.addr != MAP_FAILED);
			map.touch(0);
			INFO(pool());
			CHECK(read_pool("nr_hugepages") == "3"); // the surplus pages are in it
			CHECK(read_pool("surplus_hugepages") == "3");
			CHECK(read_pool("free_hugepages") == "2");
			CHECK(utilization() == Approx(1.0)); // all 3 belong to the mapping
		}
		// The surplus pages went with the mapping: no pool, no value.
		INFO(pool());
		CHECK(utilization() == -1);
	}
}
