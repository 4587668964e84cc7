// resctrl.vm on copies of fixture trees of /sys/fs/resctrl, cgroup v2 and
// /proc. The test plays the kernel's part (FakeKernel): mkdir makes the
// group's mon_data files, rmdir removes the group with them, writes to
// tasks are recorded one tid per write.
#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "hwsig/resctrl.h"
#include "hwsig/sampler.h"
#include "hwsig/series.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using namespace procfs_test;
namespace fs = std::filesystem;

namespace {

constexpr int kOwner = 7000;
const std::string kBase = "sys/fs/resctrl";

struct FakeKernel final : resctrl::FsOps {
	std::string root;
	int mkdir_errno = 0;                 // refuse every mkdir with this
	std::map<int, int> write_errno;      // tid -> errno of its write
	std::vector<std::string> made, removed;
	std::map<std::string, std::vector<int>> writes; // tasks path (relative to root) -> tids, one per write

	std::string rel(const std::string &path) const { return fs::path(path).lexically_relative(root).string(); }

	int make_dir(const std::string &path) override
	{
		if (mkdir_errno)
			return mkdir_errno;
		std::error_code ec;
		if (!fs::create_directory(path, ec))
			return ec ? ec.value() : EEXIST;
		// What the kernel's mkdir in mon_groups makes: counters from 0.
		for (const char *d : {"mon_L3_00", "mon_L3_01"}) {
			fs::create_directories(fs::path(path) / "mon_data" / d);
			for (const char *f : {"llc_occupancy", "mbm_total_bytes", "mbm_local_bytes"})
				std::ofstream(fs::path(path) / "mon_data" / d / f) << "0\n";
		}
		std::ofstream(fs::path(path) / "tasks");
		made.push_back(rel(path));
		return 0;
	}
	int remove_dir(const std::string &path) override
	{
		if (!fs::exists(path))
			return ENOENT;
		fs::remove_all(path);
		removed.push_back(rel(path));
		return 0;
	}
	std::vector<int> write_tasks(const std::string &tasks_path, const std::vector<int> &tids) override
	{
		std::vector<int> out;
		for (int tid : tids) {
			auto it = write_errno.find(tid);
			const int err = it == write_errno.end() ? 0 : it->second;
			out.push_back(err);
			if (!err) {
				writes[rel(tasks_path)].push_back(tid);
				std::ofstream(tasks_path, std::ios::app) << tid << "\n";
			}
		}
		return out;
	}
};

std::optional<UnavailableCode> note_code(const Snapshot &s, const std::string &id, const std::string &scope)
{
	for (const auto &u : s.unavailable())
		if (u.id == id && u.scope == scope)
			return u.code;
	return std::nullopt;
}

// A writable copy of a fixture tree with a source on it.
struct Rig {
	TempTree tree;
	FakeKernel *kernel = nullptr;
	SourcePtr source;
	std::vector<Vm> vms;

	explicit Rig(const char *fixture_name = "resctrl-xeon-2s")
	{
		fs::copy(fixture(fixture_name), tree.root(), fs::copy_options::recursive);
		auto k = std::make_unique<FakeKernel>();
		k->root = tree.root();
		kernel = k.get();
		source = make_resctrl_source(std::move(k), kOwner);
		vms = {web01(), db02()};
	}
	static Vm web01()
	{
		Vm vm;
		vm.pid = 4242;
		vm.name = "web01";
		vm.vcpu_tids = {4250, 4251};
		vm.vhost_tids = {4260};
		return vm;
	}
	static Vm db02()
	{
		Vm vm;
		vm.pid = 5100;
		vm.name = "db02";
		vm.vcpu_tids = {5101, 5102};
		vm.vhost_tids = {5150};
		return vm;
	}
	Snapshot collect(std::uint64_t mono_ns = 10'000'000'000ull)
	{
		return procfs_test::collect(*source, tree.root(), &vms, mono_ns);
	}
	// The kernel's counters of a group ("" for the default group).
	void set(const std::string &group, const char *domain, const char *file, const std::string &value) const
	{
		std::string dir = kBase + (group.empty() ? "" : "/mon_groups/" + group) + "/mon_data/" + domain;
		tree.put(dir + "/" + file, value + "\n");
	}
	bool exists(const std::string &rel) const { return fs::exists(fs::path(tree.root()) / rel); }
};

const std::string kWeb = "hwsig-7000-web01";
const std::string kDb = "hwsig-7000-db02";

} // namespace

TEST_CASE("resctrl: group names", "[resctrl]")
{
	CHECK(resctrl::group_name(812, "web01") == "hwsig-812-web01");
	CHECK(resctrl::group_name(812, "a b/c\x01") == "hwsig-812-a_b_c_");
	CHECK(resctrl::group_name(812, "..") == "hwsig-812-_");
	CHECK(resctrl::group_name(812, std::string(100, 'x')).size() == std::string("hwsig-812-").size() + 64);
	CHECK(resctrl::owner_of("hwsig-812-web01") == 812);
	CHECK(resctrl::owner_of("hwsig-812-") == 812);
	CHECK(resctrl::owner_of("hwsig--web01") == 0);
	CHECK(resctrl::owner_of("hwsig-8x2-web01") == 0);
	CHECK(resctrl::owner_of("ops-batch") == 0);
}

TEST_CASE("resctrl: system sums the L3 domains, rates over two collects", "[resctrl]")
{
	Rig rig;
	auto a = rig.collect(10'000'000'000ull);
	CHECK(gauge(a, series::kResctrlLlcOccupancy, "system") == 12582912.0 + 8388608.0);
	CHECK(counter(a, series::kResctrlMbmTotalBytes, "system") == 1500000000.0);
	CHECK(counter(a, series::kResctrlMbmLocalBytes, "system") == 1250000000.0);

	// 2 s later: socket 0 moved 600 MB (400 MB local), socket 1 200 MB (100 MB local).
	rig.set("", "mon_L3_00", "mbm_total_bytes", "1600000000");
	rig.set("", "mon_L3_00", "mbm_local_bytes", "1200000000");
	rig.set("", "mon_L3_01", "mbm_total_bytes", "700000000");
	rig.set("", "mon_L3_01", "mbm_local_bytes", "550000000");
	rig.set("", "mon_L3_01", "llc_occupancy", "4194304");
	// The VMs' groups: web01 read 80 MB and 20 MB in the interval, 3 MiB + 1 MiB held.
	rig.set(kWeb, "mon_L3_00", "mbm_total_bytes", "80000000");
	rig.set(kWeb, "mon_L3_01", "mbm_total_bytes", "20000000");
	rig.set(kWeb, "mon_L3_00", "mbm_local_bytes", "60000000");
	rig.set(kWeb, "mon_L3_01", "mbm_local_bytes", "0");
	rig.set(kWeb, "mon_L3_00", "llc_occupancy", "3145728");
	rig.set(kWeb, "mon_L3_01", "llc_occupancy", "1048576");
	auto b = rig.collect(12'000'000'000ull);
	CHECK(gauge(b, series::kResctrlLlcOccupancy, "vm:web01") == 4194304.0);
	CHECK(counter(b, series::kResctrlMbmTotalBytes, "vm:web01") == 100000000.0);
	CHECK(counter(b, series::kResctrlMbmLocalBytes, "vm:db02") == 0.0);

	auto iv = checked_derive(a, b, rig.source->provides());
	REQUIRE(metric(iv, "mem.mbm_total_bps", "system"));
	CHECK(metric(iv, "mem.mbm_total_bps", "system")->value == Approx(400000000.0));
	CHECK(metric(iv, "mem.mbm_local_bps", "system")->value == Approx(250000000.0));
	CHECK(metric(iv, "mem.llc_occupancy_bytes", "system")->value == 12582912.0 + 4194304.0);
	CHECK(metric(iv, "mem.llc_occupancy_bytes", "system")->unit == "B");
	CHECK(metric(iv, "mem.llc_occupancy_bytes", "vm:web01")->value == 4194304.0);
	CHECK(metric(iv, "mem.mbm_total_bps", "vm:web01")->value == Approx(50000000.0));
	CHECK(metric(iv, "mem.mbm_local_bps", "vm:web01")->value == Approx(30000000.0));
	CHECK(metric(iv, "mem.mbm_total_bps", "vm:db02")->value == 0.0);

	// A third interval: rates from the VM group's own deltas.
	rig.set(kWeb, "mon_L3_00", "mbm_total_bytes", "180000000");
	auto c = rig.collect(14'000'000'000ull);
	auto iv2 = checked_derive(b, c, rig.source->provides());
	CHECK(metric(iv2, "mem.mbm_total_bps", "vm:web01")->value == Approx(50000000.0));
}

TEST_CASE("resctrl: a new group's first interval has no rate", "[resctrl]")
{
	Rig rig;
	rig.vms = {};
	auto a = rig.collect(10'000'000'000ull);
	rig.vms = {Rig::web01()};
	auto b = rig.collect(12'000'000'000ull);
	CHECK(counter(b, series::kResctrlMbmTotalBytes, "vm:web01") == 0.0);
	auto iv = checked_derive(a, b, rig.source->provides());
	CHECK_FALSE(metric(iv, "mem.mbm_total_bps", "vm:web01"));
	CHECK(metric(iv, "mem.llc_occupancy_bytes", "vm:web01")); // a level: there at once
}

TEST_CASE("resctrl: the VMs' tasks, one tid per write", "[resctrl]")
{
	Rig rig;
	rig.collect();
	CHECK(rig.kernel->made == std::vector<std::string>{kBase + "/mon_groups/" + kWeb, kBase + "/mon_groups/" + kDb});
	// web01 is alone in its libvirt scope (with its vhost kthread): the
	// scope's threads.
	CHECK(rig.kernel->writes[kBase + "/mon_groups/" + kWeb + "/tasks"] ==
	      std::vector<int>{4242, 4243, 4244, 4250, 4251, 4260});
	// db02 shares a login session with a shell (900): its own threads and
	// its vhost worker, not the shell.
	CHECK(rig.kernel->writes[kBase + "/mon_groups/" + kDb + "/tasks"] == std::vector<int>{5100, 5101, 5102, 5150});

	SECTION("nothing is written again while the threads stay the same")
	{
		rig.kernel->writes.clear();
		rig.collect();
		CHECK(rig.kernel->writes.empty());
	}
	SECTION("a new thread is written alone; the scope's threads are what counts")
	{
		rig.kernel->writes.clear();
		rig.tree.mkdir("proc/4242/task/4252");
		rig.tree.put("sys/fs/cgroup/machine.slice/machine-qemu\\x2d1\\x2dweb01.scope/cgroup.threads",
			     "4242\n4243\n4244\n4250\n4251\n4252\n4253\n4260\n");
		rig.collect();
		CHECK(rig.kernel->writes[kBase + "/mon_groups/" + kWeb + "/tasks"] == std::vector<int>{4252, 4253});
		CHECK(rig.kernel->writes.count(kBase + "/mon_groups/" + kDb + "/tasks") == 0);
	}
	SECTION("a 6.1 vhost kthread that appears is written")
	{
		rig.kernel->writes.clear();
		rig.vms[1].vhost_tids = {5150, 5151};
		rig.collect();
		CHECK(rig.kernel->writes[kBase + "/mon_groups/" + kDb + "/tasks"] == std::vector<int>{5151});
	}
}

TEST_CASE("resctrl: groups go with their VM and with the source", "[resctrl]")
{
	Rig rig;
	rig.collect();
	REQUIRE(rig.exists(kBase + "/mon_groups/" + kWeb));
	REQUIRE(rig.exists(kBase + "/mon_groups/" + kDb));
	rig.vms = {Rig::db02()};
	auto s = rig.collect();
	CHECK_FALSE(rig.exists(kBase + "/mon_groups/" + kWeb));
	CHECK(rig.exists(kBase + "/mon_groups/" + kDb));
	CHECK_FALSE(gauge(s, series::kResctrlLlcOccupancy, "vm:web01"));
	rig.source.reset();
	CHECK_FALSE(rig.exists(kBase + "/mon_groups/" + kDb));
	// Others' groups are never touched.
	CHECK(rig.exists(kBase + "/mon_groups/ops-batch"));
	CHECK(rig.exists(kBase + "/mon_groups/hwsig-3100-web01"));
}

TEST_CASE("resctrl: a dead owner's group is reclaimed, a live one's kept", "[resctrl]")
{
	Rig rig;
	rig.vms = {};
	rig.tree.mkdir(kBase + "/mon_groups/hwsig-7000-leftover/mon_data"); // this pid, an earlier process
	rig.collect();
	CHECK_FALSE(rig.exists(kBase + "/mon_groups/hwsig-999999-oldvm"));
	CHECK_FALSE(rig.exists(kBase + "/mon_groups/hwsig-7000-leftover"));
	CHECK(rig.exists(kBase + "/mon_groups/hwsig-3100-web01"));
	CHECK(rig.exists(kBase + "/mon_groups/ops-batch"));
	std::set<std::string> removed(rig.kernel->removed.begin(), rig.kernel->removed.end());
	CHECK(removed == std::set<std::string>{kBase + "/mon_groups/hwsig-999999-oldvm",
					       kBase + "/mon_groups/hwsig-7000-leftover"});
}

TEST_CASE("resctrl: why it is unavailable", "[resctrl]")
{
	const char *ids[] = {"mem.llc_occupancy_bytes", "mem.mbm_total_bps", "mem.mbm_local_bps"};
	SECTION("off by default, with how to turn it on")
	{
		SourceOptions opt;
		opt.root = fixture("resctrl-xeon-2s");
		opt.pmu = false;
		opt.bpf = false;
		CHECK_FALSE(opt.resctrl);
		auto sources = default_sources(opt);
		Snapshot snap;
		bool found = false;
		for (auto &s : sources) {
			if (s->name() != "resctrl.vm")
				continue;
			found = true;
			SourceContext ctx;
			ctx.root = opt.root;
			s->collect(ctx, snap);
		}
		REQUIRE(found);
		for (const char *id : ids)
			CHECK(note(snap, id, "system") == opt.resctrl_off_reason);
		CHECK_THAT(opt.resctrl_off_reason, Catch::Matchers::StartsWith(kResctrlOffPrefix) &&
							   Catch::Matchers::Contains("--resctrl"));
		CHECK(snap.gauges().empty());
	}
	SECTION("no /sys/fs/resctrl")
	{
		TempTree t;
		t.mkdir("sys/fs");
		auto src = make_resctrl_source(std::make_unique<FakeKernel>(), kOwner);
		auto snap = collect(*src, t.root());
		for (const char *id : ids)
			CHECK(note(snap, id, "system") == "no /sys/fs/resctrl: the kernel has no resctrl "
							  "(CONFIG_X86_CPU_RESCTRL) or this CPU no RDT/PQoS");
	}
	SECTION("not mounted")
	{
		TempTree t;
		t.mkdir("sys/fs/resctrl");
		auto src = make_resctrl_source(std::make_unique<FakeKernel>(), kOwner);
		auto snap = collect(*src, t.root());
		for (const char *id : ids)
			CHECK(note(snap, id, "system") == "resctrl is not mounted (mount -t resctrl resctrl "
							  "/sys/fs/resctrl; the mount fails where the CPU has no RDT/PQoS)");
	}
	SECTION("allocation only, no monitoring")
	{
		auto src = make_resctrl_source(std::make_unique<FakeKernel>(), kOwner);
		auto snap = collect(*src, fixture("resctrl-cat-only"));
		for (const char *id : ids)
			CHECK(note(snap, id, "system") ==
			      "this CPU has no RDT/PQoS monitoring (resctrl has no info/L3_MON)");
	}
	SECTION("an event the CPU lacks")
	{
		Rig rig;
		rig.tree.put(kBase + "/info/L3_MON/mon_features", "llc_occupancy\n");
		auto snap = rig.collect();
		CHECK(note(snap, "mem.mbm_local_bps", "system") ==
		      "this CPU's RDT/PQoS monitoring has no mbm_local_bytes (not in info/L3_MON/mon_features)");
		CHECK_FALSE(note(snap, "mem.mbm_local_bps", "vm:web01"));
		CHECK_FALSE(counter(snap, series::kResctrlMbmLocalBytes, "system"));
		CHECK(gauge(snap, series::kResctrlLlcOccupancy, "system") == 20971520.0);
	}
	SECTION("a group refused with EACCES: permission, the errno in the words")
	{
		Rig rig;
		rig.kernel->mkdir_errno = EACCES;
		auto snap = rig.collect();
		for (const char *id : ids) {
			CHECK(note_code(snap, id, "vm:web01") == UnavailableCode::permission);
			CHECK_THAT(note(snap, id, "vm:web01").value_or(""), Catch::Contains("Permission denied"));
		}
		CHECK(gauge(snap, series::kResctrlLlcOccupancy, "system") == 20971520.0);
	}
	SECTION("out of RMIDs")
	{
		Rig rig;
		rig.kernel->mkdir_errno = ENOSPC;
		auto snap = rig.collect();
		for (const char *id : ids) {
			CHECK(note(snap, id, "vm:web01") ==
			      "out of RMIDs (info/L3_MON/num_rmids = 224, one per monitoring or control group): "
			      "creating mon_groups/hwsig-7000-web01: No space left on device");
			CHECK(note_code(snap, id, "vm:web01") == UnavailableCode::capacity);
		}
		CHECK(gauge(snap, series::kResctrlLlcOccupancy, "system") == 20971520.0);
		// Freed RMIDs: made at the next rediscovery.
		rig.kernel->mkdir_errno = 0;
		auto again = rig.collect();
		CHECK(gauge(again, series::kResctrlLlcOccupancy, "vm:web01") == 0.0);
	}
	SECTION("a domain reads Unavailable")
	{
		Rig rig;
		rig.set("", "mon_L3_01", "mbm_local_bytes", "Unavailable");
		auto snap = rig.collect();
		CHECK(note(snap, "mem.mbm_local_bps", "system") ==
		      "mon_data/mon_L3_01/mbm_local_bytes reads \"Unavailable\": the hardware has no count for "
		      "this RMID on this domain");
		CHECK_FALSE(counter(snap, series::kResctrlMbmLocalBytes, "system"));
		CHECK(counter(snap, series::kResctrlMbmTotalBytes, "system") == 1500000000.0);
	}
	SECTION("a thread in another control group")
	{
		Rig rig;
		rig.kernel->write_errno[5101] = EINVAL;
		auto snap = rig.collect();
		CHECK(note(snap, "mem.llc_occupancy_bytes", "vm:db02") ==
		      "thread 5101 is in another resctrl control group, which a monitoring group of the default "
		      "one cannot take: writing tid 5101 to mon_groups/hwsig-7000-db02/tasks: Invalid argument");
		CHECK(gauge(snap, series::kResctrlLlcOccupancy, "vm:web01") == 0.0);
	}
}
