// FileCache (kept fds re-read with pread), the sources that read through
// it (a long-lived source must say exactly what a fresh one says, whatever
// happens to the files between snapshots), BlockDevNames and VmScanner.
#include <catch2/catch.hpp>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "hwsig/block_device.h"
#include "hwsig/fs.h"
#include "hwsig/procfs.h"
#include "hwsig/snapshot_wire.h"
#include "hwsig/vm_discovery.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using procfs_test::TempTree;

namespace {

std::string read_text(FileCache &cache, const std::string &path, int *err = nullptr)
{
	auto r = cache.read(path);
	if (err)
		*err = r.err;
	return r.data ? std::string(*r.data) : std::string("<err>");
}

// Writes a new file and renames it over rel: a new inode at the same path.
void replace(const TempTree &t, const std::string &rel, const std::string &text)
{
	t.put(rel + ".new", text);
	std::filesystem::rename(t.root() + "/" + rel + ".new", t.root() + "/" + rel);
}

std::string encode(const Snapshot &s, const Source &source)
{
	return encode_snapshot(s, {}, source.provides());
}

} // namespace

TEST_CASE("FileCache re-reads a file rewritten in place", "[fs][filecache]")
{
	TempTree t;
	t.put("a", "one\n");
	FileCache cache(4);
	const std::string path = t.root() + "/a";
	CHECK(read_text(cache, path) == "one\n");
	CHECK(cache.open_count() == 1);
	t.put("a", "two, longer\n");
	CHECK(read_text(cache, path) == "two, longer\n");
	t.put("a", "3\n");
	CHECK(read_text(cache, path) == "3\n"); // shorter: nothing of the old content
	CHECK(cache.open_count() == 1);
}

TEST_CASE("FileCache reads a file replaced by rename, not the kept inode", "[fs][filecache]")
{
	TempTree t;
	t.put("a", "old\n");
	FileCache cache(4);
	const std::string path = t.root() + "/a";
	CHECK(read_text(cache, path) == "old\n");
	replace(t, "a", "new\n");
	CHECK(read_text(cache, path) == "new\n");
	CHECK(cache.open_count() == 1);
}

TEST_CASE("FileCache: a deleted file gives ENOENT, a recreated one is read again", "[fs][filecache]")
{
	TempTree t;
	t.put("a", "before\n");
	FileCache cache(4);
	const std::string path = t.root() + "/a";
	CHECK(read_text(cache, path) == "before\n");
	std::filesystem::remove(path);
	int err = 0;
	CHECK(read_text(cache, path, &err) == "<err>");
	CHECK(err == ENOENT);
	CHECK(cache.open_count() == 0);
	t.put("a", "after\n");
	CHECK(read_text(cache, path) == "after\n");
	CHECK(cache.open_count() == 1);
}

TEST_CASE("FileCache never holds more fds than its bound and reads past it", "[fs][filecache]")
{
	TempTree t;
	FileCache cache(3);
	for (int round = 0; round < 3; ++round)
		for (int i = 0; i < 10; ++i) {
			const std::string rel = "f" + std::to_string(i);
			const std::string text = rel + " round " + std::to_string(round) + "\n";
			t.put(rel, text);
			CHECK(read_text(cache, t.root() + "/" + rel) == text);
			CHECK(cache.open_count() <= 3);
		}
	CHECK(cache.open_count() == 3);
	CHECK(cache.max_open() == 3);

	FileCache none(0);
	t.put("x", "x\n");
	CHECK(read_text(none, t.root() + "/x") == "x\n");
	CHECK(none.open_count() == 0);
}

TEST_CASE("FileCache: sweep closes what was not read since the last sweep, revalidate what moved", "[fs][filecache]")
{
	TempTree t;
	t.put("a", "a\n");
	t.put("b", "b\n");
	FileCache cache(8);
	read_text(cache, t.root() + "/a");
	read_text(cache, t.root() + "/b");
	cache.sweep();
	CHECK(cache.open_count() == 2);
	read_text(cache, t.root() + "/a");
	cache.sweep();
	CHECK(cache.open_count() == 1);
	cache.sweep();
	CHECK(cache.open_count() == 0);

	read_text(cache, t.root() + "/a");
	read_text(cache, t.root() + "/b");
	replace(t, "b", "b2\n");
	cache.revalidate();
	CHECK(cache.open_count() == 1);
	CHECK(read_text(cache, t.root() + "/b") == "b2\n");
}

TEST_CASE("FileCache: errors and size limit as read_file", "[fs][filecache]")
{
	TempTree t;
	t.put("big", std::string(10000, 'x'));
	t.put("empty", "");
	FileCache cache(4);
	auto r = cache.read(t.root() + "/big", 9999);
	CHECK(!r.data);
	CHECK(r.err == EFBIG);
	CHECK(read_file(t.root() + "/big", 9999).err == EFBIG);
	CHECK(cache.read(t.root() + "/big", 10000).data->size() == 10000);
	CHECK(cache.read(t.root() + "/empty").data == std::string_view());
	CHECK(cache.read(t.root() + "/missing").err == ENOENT);
	CHECK(cache.read(t.root()).err == EISDIR);
}

TEST_CASE("FileCache on procfs: a kept fd regenerates, a dead process's is never read", "[fs][filecache][live]")
{
	FileCache cache(4);
	char old_name[17] = {};
	REQUIRE(::prctl(PR_GET_NAME, old_name) == 0);
	REQUIRE(::prctl(PR_SET_NAME, "hwsig-fc-one") == 0);
	CHECK(read_text(cache, "/proc/self/task/" + std::to_string(::gettid()) + "/comm") == "hwsig-fc-one\n");
	REQUIRE(::prctl(PR_SET_NAME, "hwsig-fc-two") == 0);
	CHECK(read_text(cache, "/proc/self/task/" + std::to_string(::gettid()) + "/comm") == "hwsig-fc-two\n");
	::prctl(PR_SET_NAME, old_name);

	// Larger than a page: read on to EOF at increasing offsets.
	auto vmstat = cache.read("/proc/vmstat");
	REQUIRE(vmstat.data);
	std::string first(*vmstat.data);
	vmstat = cache.read("/proc/vmstat");
	REQUIRE(vmstat.data);
	CHECK(vmstat.data->size() > 1000);
	CHECK(vmstat.data->substr(0, 14) == first.substr(0, 14));
	CHECK(vmstat.data->back() == '\n');
	CHECK(parse_vmstat(*vmstat.data).error.empty());

	pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		::prctl(PR_SET_NAME, "hwsig-fc-child");
		::pause();
		::_exit(0);
	}
	const std::string comm = "/proc/" + std::to_string(child) + "/comm";
	std::string seen;
	for (int i = 0; i < 200 && seen != "hwsig-fc-child\n"; ++i) {
		seen = read_text(cache, comm);
		::usleep(5000);
	}
	CHECK(seen == "hwsig-fc-child\n");
	::kill(child, SIGKILL);
	::waitpid(child, nullptr, 0);
	int err = 0;
	CHECK(read_text(cache, comm, &err) == "<err>");
	CHECK(err == ENOENT);
}

// Each line's first token: what stays when values move between two reads.
static std::vector<std::string> line_keys(std::string_view text)
{
	std::vector<std::string> keys;
	std::size_t at = 0;
	while (at < text.size()) {
		std::size_t end = text.find('\n', at);
		if (end == std::string_view::npos)
			end = text.size();
		std::string_view line = text.substr(at, end - at);
		keys.emplace_back(line.substr(0, line.find_first_of(" \t")));
		at = end + 1;
	}
	return keys;
}

// A kept procfs fd stops at the first read short of half a page (no EOF
// read): files of many records over several pages must still come whole.
TEST_CASE("FileCache on procfs: multi-page files of many records are read whole", "[fs][filecache][live]")
{
	pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		::pause();
		::_exit(0);
	}
	std::vector<std::string> paths = {"/proc/" + std::to_string(child) + "/smaps", "/proc/vmstat"};
	if (path_exists("/proc/zoneinfo"))
		paths.push_back("/proc/zoneinfo");
	FileCache cache(4);
	for (const auto &path : paths) {
		INFO(path);
		auto want = read_file(path);
		REQUIRE(want.data);
		for (int round = 0; round < 2; ++round) { // fresh open, then the kept fd
			auto got = cache.read(path);
			REQUIRE(got.data);
			CHECK(line_keys(*got.data) == line_keys(*want.data));
		}
	}
	auto smaps = read_file(paths.front());
	REQUIRE(smaps.data);
	CHECK(smaps.data->size() > 3 * 4096); // the case it is about: several pages
	::kill(child, SIGKILL);
	::waitpid(child, nullptr, 0);
}

TEST_CASE("FileCache on sysfs: an attribute is read whole", "[fs][filecache][live]")
{
	const std::string path = "/sys/kernel/mm/transparent_hugepage/enabled";
	if (!path_exists(path)) {
		WARN("no " << path << ": not checked");
		return;
	}
	FileCache cache(2);
	auto want = read_file(path);
	REQUIRE(want.data);
	auto got = cache.read(path);
	REQUIRE(got.data);
	CHECK(*got.data == *want.data);
	got = cache.read(path);
	REQUIRE(got.data);
	CHECK(*got.data == *want.data);
	CHECK(cache.open_count() == 1);
}

// A long-lived source against a scratch tree whose files change between
// snapshots: every snapshot must encode exactly as a fresh source's.
TEST_CASE("procfs sources kept open say what fresh ones say as files change", "[fs][filecache][procfs]")
{
	TempTree t;
	std::filesystem::copy(procfs_test::fixture("amd-1s-64cpu-4node"), t.root(), std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	std::vector<SourcePtr> kept;
	for (auto make : {make_stat_source, make_numa_source, make_meminfo_source, make_psi_source,
			  make_schedstat_source})
		kept.push_back(make());
	auto compare = [&](const std::string &what) {
		INFO(what);
		std::size_t i = 0;
		for (auto make : {make_stat_source, make_numa_source, make_meminfo_source, make_psi_source,
				  make_schedstat_source}) {
			auto fresh = make();
			auto a = procfs_test::collect(*kept[i], t.root());
			auto b = procfs_test::collect(*fresh, t.root());
			INFO(fresh->name());
			CHECK(encode(a, *fresh) == encode(b, *fresh));
			++i;
		}
	};
	const std::string vmstat = procfs_test::fixture_text("amd-1s-64cpu-4node", "/proc/vmstat");
	const std::string meminfo = procfs_test::fixture_text("amd-1s-64cpu-4node", "/proc/meminfo");
	compare("as committed");
	compare("again (fast parsers)");

	auto bump = [](std::string text, const std::string &key) {
		auto pos = text.find(key + " ");
		if (pos == std::string::npos)
			pos = text.find(key + ":");
		REQUIRE(pos != std::string::npos);
		auto digit = text.find_first_of("0123456789", pos + key.size());
		text.insert(digit, "7");
		return text;
	};
	t.put("proc/vmstat", bump(vmstat, "pgmigrate_success"));
	t.put("proc/meminfo", bump(meminfo, "AnonHugePages"));
	compare("values changed in place");
	replace(t, "proc/vmstat", bump(bump(vmstat, "pgmigrate_success"), "thp_fault_alloc"));
	replace(t, "proc/meminfo", bump(meminfo, "HugePages_Free"));
	compare("files replaced");
	t.put("proc/vmstat", vmstat + vmstat.substr(0, vmstat.find('\n') + 1));
	t.put("proc/meminfo", meminfo + meminfo.substr(0, meminfo.find('\n') + 1));
	compare("a line listed twice");
	t.put("proc/vmstat", "pgmigrate_success 01\n");
	t.put("proc/meminfo", "AnonHugePages: 01 kB\n");
	compare("a leading zero");
	t.put("proc/vmstat", vmstat);
	t.put("proc/meminfo", meminfo);
	compare("back as committed");
	t.put("proc/vmstat", bump(vmstat, "pgmigrate_success") + "extra_counter 5\n");
	compare("a line more");
	t.put("proc/vmstat", vmstat.substr(0, vmstat.size() - 1));
	t.put("proc/meminfo", meminfo.substr(0, meminfo.size() - 1));
	compare("no final newline");
	t.put("proc/vmstat", "pgmigrate_success 99999999999999999999\n");
	compare("a value past 64 bits");
	std::filesystem::remove(t.root() + "/proc/vmstat");
	std::filesystem::remove(t.root() + "/proc/meminfo");
	std::filesystem::remove_all(t.root() + "/proc/pressure");
	compare("files deleted");
	t.put("proc/vmstat", vmstat);
	t.put("proc/meminfo", meminfo);
	std::filesystem::copy(procfs_test::fixture("amd-1s-64cpu-4node") + "/proc/pressure", t.root() + "/proc/pressure");
	compare("files back");
	for (const auto &node : list_dir(t.root() + "/sys/devices/system/node", "node"))
		std::filesystem::remove_all(t.root() + "/sys/devices/system/node/" + node);
	compare("NUMA nodes gone (layout listed again at once)");
}

// An administrator's file: the last text within the period, a fresh read
// after it or for another path.
TEST_CASE("PeriodicFile reads again after its period or for another path", "[filecache]")
{
	TempTree t;
	t.put("a", "never\n");
	t.put("b", "always\n");
	PeriodicFile hourly(std::chrono::hours(1));
	CHECK(hourly.read(t.root() + "/a").data == std::optional<std::string>("never\n"));
	t.put("a", "madvise\n");
	CHECK(hourly.read(t.root() + "/a").data == std::optional<std::string>("never\n")); // within the hour
	CHECK(hourly.read(t.root() + "/b").data == std::optional<std::string>("always\n"));
	PeriodicFile every(std::chrono::seconds(0));
	CHECK(every.read(t.root() + "/a").data == std::optional<std::string>("madvise\n"));
	std::filesystem::remove(t.root() + "/a");
	const auto &gone = every.read(t.root() + "/a");
	CHECK_FALSE(gone.data);
	CHECK(gone.err == ENOENT);
}

// The NUMA layout is listed again when the online mask changes, when
// forced, when the root changes, and without a mask at every check.
TEST_CASE("NodeLayoutClock lists again when the online mask changes", "[numa][filecache]")
{
	TempTree t;
	t.put("sys/devices/system/node/online", "0-1\n");
	NodeLayoutClock every_check(std::chrono::seconds(0), std::chrono::hours(1));
	CHECK(every_check.due(t.root(), false)); // first
	CHECK_FALSE(every_check.due(t.root(), false));
	CHECK_FALSE(every_check.due(t.root(), false));
	t.put("sys/devices/system/node/online", "0-2\n"); // a node onlined
	CHECK(every_check.due(t.root(), false));
	CHECK_FALSE(every_check.due(t.root(), false));
	CHECK(every_check.due(t.root(), true)); // a layout file failed
	TempTree other;
	other.put("sys/devices/system/node/online", "0-2\n");
	CHECK(every_check.due(other.root(), false)); // another root
	std::filesystem::remove(other.root() + "/sys/devices/system/node/online");
	CHECK(every_check.due(other.root(), false)); // no mask: every check
	CHECK(every_check.due(other.root(), false));

	NodeLayoutClock hourly(std::chrono::hours(1), std::chrono::hours(2));
	CHECK(hourly.due(t.root(), false));
	t.put("sys/devices/system/node/online", "0\n");
	CHECK_FALSE(hourly.due(t.root(), false)); // not checked before the hour
	NodeLayoutClock aged(std::chrono::seconds(0), std::chrono::seconds(0));
	CHECK(aged.due(t.root(), false));
	CHECK(aged.due(t.root(), false)); // the listing is max_age old
}

TEST_CASE("BlockDevNames looks a dev_t up once, again after its refresh time", "[block][filecache]")
{
	TempTree t;
	t.put("sys/dev/block/8:0/uevent", "MAJOR=8\nMINOR=0\nDEVNAME=sda\n");
	BlockDevNames names(1000);
	const std::uint32_t sda = (8u << 20) | 0, sdb = (8u << 20) | 16;
	names.begin(t.root(), 1);
	CHECK(names.label(sda) == "sda");
	CHECK(names.label(sdb) == "8:16"); // no such device (yet)
	t.put("sys/dev/block/8:0/uevent", "MAJOR=8\nMINOR=0\nDEVNAME=sdz\n");
	t.put("sys/dev/block/8:16/uevent", "MAJOR=8\nMINOR=16\nDEVNAME=sdb\n");
	names.begin(t.root(), 500);
	CHECK(names.label(sda) == "sda"); // kept until the refresh
	CHECK(names.label(sdb) == "8:16");
	names.begin(t.root(), 1001);
	CHECK(names.label(sda) == "sdz");
	CHECK(names.label(sdb) == "sdb");
	CHECK(names.size() == 2);
	CHECK_FALSE(names.gone(sda));
	// Unplugged: gone at the next refresh (its kept uevent fd does not
	// keep it alive), named by MAJ:MIN.
	std::filesystem::remove_all(t.root() + "/sys/dev/block/8:0");
	names.begin(t.root(), 2002);
	CHECK(names.gone(sda));
	CHECK(names.label(sda) == "8:0");
	CHECK_FALSE(names.gone(sdb));
	TempTree other;
	names.begin(other.root(), 2003); // another root: nothing kept
	CHECK(names.label(sda) == "8:0");
}

TEST_CASE("VmScanner finds what discover_vms finds, scan after scan", "[vm][filecache]")
{
	auto same = [](const std::vector<Vm> &a, const std::vector<Vm> &b) {
		REQUIRE(a.size() == b.size());
		for (std::size_t i = 0; i < a.size(); ++i) {
			CHECK(a[i].pid == b[i].pid);
			CHECK(a[i].name == b[i].name);
			CHECK(a[i].vcpu_tids == b[i].vcpu_tids);
			CHECK(a[i].vhost_tids == b[i].vhost_tids);
			CHECK(a[i].taps == b[i].taps);
		}
	};
	const std::string root = procfs_test::fixture("kvm-host");
	VmScanner scanner(root, 8);
	auto want = discover_vms(root);
	for (int i = 0; i < 3; ++i) {
		same(scanner.scan(), want);
		CHECK(scanner.open_fds() <= 8);
	}
	VmScanner unbounded(root, 4096);
	same(unbounded.scan(), want);
	same(unbounded.scan(), want);
}

TEST_CASE("VmScanner reads a /proc replaced under its root, not the kept directory", "[vm][filecache]")
{
	TempTree t;
	auto copy_tree = [&] {
		std::filesystem::copy(procfs_test::fixture("kvm-host"), t.root(),
				      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	};
	copy_tree();
	VmScanner scanner(t.root(), 64);
	auto first = scanner.scan();
	REQUIRE(!first.empty());
	std::filesystem::remove_all(t.root() + "/proc");
	CHECK(scanner.scan().empty());
	copy_tree();
	CHECK(scanner.scan().size() == first.size());
}

// NonVmMemo: a settled non-QEMU process is not read again; one that was
// forked (read at two scans) and then turns into a QEMU is seen at once,
// one that turns into a QEMU later within kFullEvery scans, a reused pid
// (a new /proc inode) at once.
TEST_CASE("VmScanner skips settled processes, yet sees every QEMU", "[vm][filecache]")
{
	TempTree t;
	std::filesystem::copy(procfs_test::fixture("kvm-host"), t.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	auto process = [&](const std::string &dir, const std::string &comm, const std::string &guest,
			   const std::string &pid = {}) {
		t.put(dir + "/comm", comm + "\n");
		t.put(dir + "/status", "Name:\t" + comm + "\nState:\tS (sleeping)\n");
		std::string cmdline = guest.empty() ? std::string("/bin/sh\0-c\0sleep", 15)
						    : std::string("/usr/bin/qemu-system-x86_64\0-name\0guest=", 40) + guest;
		t.put(dir + "/cmdline", cmdline + std::string(1, '\0'));
		t.put(dir + "/task/" + (pid.empty() ? dir.substr(dir.rfind('/') + 1) : pid) + "/comm", comm + "\n");
		t.mkdir(dir + "/fd");
	};
	auto names = [](const std::vector<Vm> &vms) {
		std::set<std::string> out;
		for (const auto &vm : vms)
			out.insert(vm.name);
		return out;
	};
	VmScanner scanner(t.root(), 64);
	const auto base = names(scanner.scan());
	REQUIRE(!base.empty());

	// Forked by libvirt, exec'd before the next scan: seen at once.
	process("proc/7002", "rpc-libvirtd", "");
	CHECK(names(scanner.scan()) == base);
	process("proc/7002", "qemu-system-x86", "forked");
	CHECK(names(scanner.scan()).count("forked") == 1);

	// A process that stays no QEMU for two scans is settled: a later exec
	// is seen at the next full scan, at most kFullEvery scans on.
	process("proc/7001", "sleep", "");
	for (int i = 0; i < 3; ++i)
		CHECK(names(scanner.scan()).count("late") == 0);
	process("proc/7001", "qemu-system-x86", "late");
	unsigned scans = 0;
	while (scans < NonVmMemo::kFullEvery && !names(scanner.scan()).count("late"))
		++scans;
	CHECK(scans < NonVmMemo::kFullEvery);
	CHECK(names(scanner.scan()).count("late") == 1); // and stays seen

	// A settled pid reused by a QEMU: a new /proc entry (new inode), seen
	// at the first scan. The new entry is made before the old goes, so
	// that the inode cannot be the old one's.
	process("proc/7003", "sleep", "");
	for (int i = 0; i < 3; ++i)
		scanner.scan();
	process("proc/7003.new", "qemu-system-x86", "reused", "7003");
	std::filesystem::rename(t.root() + "/proc/7003", t.root() + "/proc/7003.old");
	std::filesystem::rename(t.root() + "/proc/7003.new", t.root() + "/proc/7003");
	std::filesystem::remove_all(t.root() + "/proc/7003.old");
	CHECK(names(scanner.scan()).count("reused") == 1);

	// Gone processes are forgotten.
	std::filesystem::remove_all(t.root() + "/proc/7001");
	std::filesystem::remove_all(t.root() + "/proc/7002");
	std::filesystem::remove_all(t.root() + "/proc/7003");
	CHECK(names(scanner.scan()) == base);
}

// QemuMemo: a QEMU read in full at two listings with as many threads is not
// read again until its kDeepEvery-th listing (a rename of its guest, which a
// real QEMU cannot do, shows when it is); a thread that comes or goes has it
// read again at once. Without /proc/loadavg every scan is a listing.
TEST_CASE("VmScanner reads a settled QEMU again only when its threads change", "[vm][filecache]")
{
	TempTree t;
	std::filesystem::copy(procfs_test::fixture("kvm-host"), t.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	const int pid = 7001;
	const std::string dir = "proc/" + std::to_string(pid);
	auto name = [&](const std::string &guest) {
		t.put(dir + "/cmdline",
		      std::string("/usr/bin/qemu-system-x86_64\0-name\0guest=", 40) + guest + std::string(1, '\0'));
	};
	t.put(dir + "/comm", "qemu-system-x86\n");
	t.put(dir + "/status", "Name:\tqemu-system-x86\nState:\tS (sleeping)\n");
	t.put(dir + "/task/7001/comm", "qemu-system-x86\n");
	t.put(dir + "/task/7002/comm", "CPU 0/KVM\n");
	t.mkdir(dir + "/fd");
	name("first");
	auto find = [&](const std::vector<Vm> &vms) -> const Vm * {
		for (const auto &vm : vms)
			if (vm.pid == pid)
				return &vm;
		return nullptr;
	};
	VmScanner scanner(t.root(), 64);
	// Listings 1 and 2 read it in full; the k-th listing reads it again
	// when (k + pid) % kDeepEvery == 0.
	auto deep = [&](unsigned listing) { return (listing + pid) % vmparse::QemuMemo::kDeepEvery == 0; };
	for (unsigned listing = 1; listing <= 2; ++listing) {
		const auto vms = scanner.scan();
		REQUIRE(find(vms));
		CHECK(find(vms)->name == "first");
	}
	name("renamed");
	unsigned listing = 3;
	for (; !deep(listing); ++listing) {
		const auto vms = scanner.scan();
		REQUIRE(find(vms));
		CHECK(find(vms)->name == "first"); // not read again
		CHECK(find(vms)->vcpu_tids == std::vector<int>{7002});
	}
	CHECK(listing - 3 < vmparse::QemuMemo::kDeepEvery);
	const auto at_deep = scanner.scan();
	REQUIRE(find(at_deep));
	CHECK(find(at_deep)->name == "renamed");

	// A vCPU thread comes: read again at the next listing, whatever its turn.
	name("threads");
	t.put(dir + "/task/7003/comm", "CPU 1/KVM\n");
	REQUIRE_FALSE(deep(listing + 1));
	const auto more = scanner.scan();
	REQUIRE(find(more));
	CHECK(find(more)->name == "threads");
	CHECK(find(more)->vcpu_tids == std::vector<int>{7002, 7003});
	// And one goes.
	std::filesystem::remove_all(t.root() + "/" + dir + "/task/7003");
	const auto fewer = scanner.scan();
	REQUIRE(find(fewer));
	CHECK(find(fewer)->vcpu_tids == std::vector<int>{7002});
	// It exits: gone, and forgotten.
	std::filesystem::remove_all(t.root() + "/" + dir);
	CHECK_FALSE(find(scanner.scan()));
}

// With /proc/loadavg, a scan lists /proc only when a pid was allocated
// since the last listing or a listed QEMU exited or changed its thread
// count; and at least every kFullEvery scans.
TEST_CASE("VmScanner lists /proc only when a pid was allocated or a QEMU changed", "[vm][filecache]")
{
	TempTree t;
	std::filesystem::copy(procfs_test::fixture("kvm-host"), t.root(),
			      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
	auto qemu = [&](const std::string &pid, const std::string &guest) {
		t.put("proc/" + pid + "/comm", "qemu-system-x86\n");
		t.put("proc/" + pid + "/status", "Name:\tqemu-system-x86\nState:\tS (sleeping)\n");
		t.put("proc/" + pid + "/cmdline",
		      std::string("/usr/bin/qemu-system-x86_64\0-name\0guest=", 40) + guest + std::string(1, '\0'));
		t.put("proc/" + pid + "/task/" + pid + "/comm", "qemu-system-x86\n");
		t.mkdir("proc/" + pid + "/fd");
	};
	auto names = [](const std::vector<Vm> &vms) {
		std::set<std::string> out;
		for (const auto &vm : vms)
			out.insert(vm.name);
		return out;
	};
	auto last_pid = [&](int pid) { t.put("proc/loadavg", "0.00 0.01 0.05 1/97 " + std::to_string(pid) + "\n"); };
	last_pid(7000);
	VmScanner scanner(t.root(), 64);
	const auto base = names(scanner.scan());
	REQUIRE(!base.empty());
	REQUIRE(scanner.listings() == 1);

	// No pid allocated: a QEMU that appeared anyway (only a test tree can
	// do that) is not listed, the last list stands.
	qemu("7001", "unseen");
	CHECK(names(scanner.scan()) == base);
	CHECK(scanner.listings() == 1);
	// A pid allocated: listed.
	last_pid(7001);
	CHECK(names(scanner.scan()).count("unseen") == 1);
	CHECK(scanner.listings() == 2);
	CHECK(names(scanner.scan()).count("unseen") == 1);
	CHECK(scanner.listings() == 2);

	// A thread of a listed QEMU exits (no pid allocated): its task link
	// count changes, listed again.
	t.mkdir("proc/7001/task/7005");
	t.put("proc/7001/task/7005/comm", "CPU 0/KVM\n");
	last_pid(7005);
	scanner.scan();
	const auto listed = scanner.listings();
	std::filesystem::remove_all(t.root() + "/proc/7001/task/7005");
	scanner.scan();
	CHECK(scanner.listings() == listed + 1);

	// A listed QEMU exits: gone at the next scan without any pid allocated.
	std::filesystem::remove_all(t.root() + "/proc/7001");
	CHECK(names(scanner.scan()) == base);

	// Nothing changes at all: still listed once every kFullEvery scans.
	const auto before = scanner.listings();
	for (unsigned i = 0; i < NonVmMemo::kFullEvery; ++i)
		scanner.scan();
	CHECK(scanner.listings() == before + 1);

	// Without /proc/loadavg every scan lists.
	std::filesystem::remove(t.root() + "/proc/loadavg");
	const auto unskipped = scanner.listings();
	scanner.scan();
	scanner.scan();
	CHECK(scanner.listings() == unskipped + 2);
}

// The same on this host's kernel: a process started between two scans is
// listed (it took a pid), and its exit is seen without another pid.
TEST_CASE("VmScanner on this host: a new QEMU is seen, its exit too", "[vm][filecache][live]")
{
	VmScanner scanner("/");
	scanner.scan();
	int ready[2];
	REQUIRE(::pipe(ready) == 0);
	pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		// A QEMU's comm: what decides discovery (argv only names it).
		::prctl(PR_SET_NAME, "qemu-system-x86", 0, 0, 0);
		::close(ready[0]);
		::write(ready[1], "r", 1);
		::pause();
		::_exit(0);
	}
	::close(ready[1]);
	char c;
	REQUIRE(::read(ready[0], &c, 1) == 1);
	::close(ready[0]);
	auto has = [&](const std::vector<Vm> &vms) {
		return std::any_of(vms.begin(), vms.end(), [&](const Vm &vm) { return vm.pid == child; });
	};
	const auto with = scanner.scan();
	::kill(child, SIGKILL);
	::waitpid(child, nullptr, 0);
	const auto listings = scanner.listings();
	const auto without = scanner.scan();
	CHECK(has(with));
	CHECK_FALSE(has(without));
	CHECK(scanner.listings() == listings + 1); // listed again: the QEMU's task dir is gone
}

// A busy host forks all the time: processes that are not QEMU must not make
// every scan list /proc (a dentry lookup per process in the kernel), yet a
// newcomer that turns into a QEMU (libvirt forks, then execs) is still found
// at the next scan.
TEST_CASE("VmScanner on this host: forks that are not QEMU are read alone, a newcomer turned QEMU is listed",
	  "[vm][filecache][live]")
{
	VmScanner scanner("/");
	scanner.scan();
	REQUIRE(scanner.listings() == 1);
	for (int i = 0; i < 30; ++i) {
		pid_t p = ::fork();
		REQUIRE(p >= 0);
		if (p == 0)
			::_exit(0);
		::waitpid(p, nullptr, 0);
	}
	int cmd[2], ack[2];
	REQUIRE(::pipe(cmd) == 0);
	REQUIRE(::pipe(ack) == 0);
	pid_t stayer = ::fork();
	REQUIRE(stayer >= 0);
	if (stayer == 0) {
		char c;
		if (::read(cmd[0], &c, 1) == 1)
			::prctl(PR_SET_NAME, "qemu-system-x86", 0, 0, 0);
		::write(ack[1], "r", 1);
		::pause();
		::_exit(0);
	}
	::close(cmd[0]);
	::close(ack[1]);
	auto has = [&](const std::vector<Vm> &vms) {
		return std::any_of(vms.begin(), vms.end(), [&](const Vm &vm) { return vm.pid == stayer; });
	};
	const auto before = scanner.scan();
	CHECK_FALSE(has(before));
	CHECK(scanner.listings() == 1); // 31 pids allocated, none a QEMU: not listed
	CHECK(scanner.quick_checks() == 1);

	char c;
	REQUIRE(::write(cmd[1], "q", 1) == 1);
	REQUIRE(::read(ack[0], &c, 1) == 1);
	const auto after = scanner.scan();
	::kill(stayer, SIGKILL);
	::waitpid(stayer, nullptr, 0);
	::close(cmd[1]);
	::close(ack[0]);
	CHECK(has(after));
	CHECK(scanner.listings() == 2);
}

TEST_CASE("VmScanner on this host: comm fds bounded and dropped with their processes", "[vm][filecache][live]")
{
	VmScanner scanner("/");
	scanner.scan();
	std::size_t first = scanner.open_fds();
	CHECK(first > 0);
	CHECK(first <= 512);
	pid_t child = ::fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		::pause();
		::_exit(0);
	}
	scanner.scan();
	std::size_t with_child = scanner.open_fds();
	::kill(child, SIGKILL);
	::waitpid(child, nullptr, 0);
	scanner.scan();
	// The child's comm (and its thread's) went with it; other processes
	// may have come or gone meanwhile, so only the bound is exact.
	CHECK(scanner.open_fds() <= 512);
	CHECK(with_child >= 1);
}
