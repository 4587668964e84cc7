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

TEST_CASE("meminfo source on this host: surplus huge pages counted once", "[hugepages][source]")
{
	hwsig_test::require_root();
	REQUIRE(!read_pool("nr_hugepages").empty()); // a kernel with 2 MiB HugeTLB pages
	PoolRestore restore;
	REQUIRE(restore.nr == "0"); // the host's own pool untouched: this test needs it empty
	REQUIRE(write_pool("nr_overcommit_hugepages", "4"));

	// Three surplus pages reserved by the mapping (free until touched),
	// one of them touched: 1 of 3 in use.
	void *map = ::mmap(nullptr, 3 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	INFO("mmap of 3 huge pages: " << (map == MAP_FAILED ? std::strerror(errno) : "ok"));
	REQUIRE(map != MAP_FAILED);
	static_cast<char *>(map)[0] = 1;
	INFO("nr " << read_pool("nr_hugepages") << ", free " << read_pool("free_hugepages") << ", surplus "
		   << read_pool("surplus_hugepages"));
	CHECK(read_pool("surplus_hugepages") == "3");
	CHECK(read_pool("free_hugepages") == "2");

	auto source = make_meminfo_source();
	Snapshot snap;
	SourceContext ctx;
	source->collect(ctx, snap);
	const double *util = snap.gauge(series::kHugepageUtilization, "hugepages:2048kB");
	REQUIRE(util);
	CHECK(*util == Approx(1.0 / 3));
	::munmap(map, 3 * kPage);
}
