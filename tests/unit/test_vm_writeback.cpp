// Whether a VM's writeback can be told apart (its cgroup v2, up to the
// threaded domain, with the memory and io controllers), and which files it
// writes through the page cache: on scratch /proc and cgroupfs trees.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "hwsig/vm_writeback.h"
#include "test_procfs_tree.h"

using namespace hwsig;
using procfs_test::TempTree;

namespace {

std::uint64_t inode_of(const std::string &path)
{
	struct stat st {};
	REQUIRE(::stat(path.c_str(), &st) == 0);
	return static_cast<std::uint64_t>(st.st_ino);
}

// libvirt's layout under cgroup v2: the VM's scope, its "libvirt" domain
// and the threaded children its threads are in.
void libvirt_tree(const TempTree &t, const std::string &controllers)
{
	const std::string vm = "sys/fs/cgroup/machine.slice/machine-qemu\\x2d1\\x2dweb.scope";
	t.put("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	t.put(vm + "/cgroup.controllers", controllers + "\n");
	t.put(vm + "/cgroup.type", "domain\n");
	t.put(vm + "/libvirt/cgroup.controllers", controllers + "\n");
	t.put(vm + "/libvirt/cgroup.type", "domain threaded\n");
	t.put(vm + "/libvirt/emulator/cgroup.type", "threaded\n");
	t.put(vm + "/libvirt/vcpu0/cgroup.type", "threaded\n");
	t.put("proc/4242/cgroup", "0::/machine.slice/machine-qemu\\x2d1\\x2dweb.scope/libvirt/emulator\n");
}

} // namespace

TEST_CASE("vm_writeback: the threaded domain of the VM's cgroup, with memory and io", "[vm][writeback]")
{
	TempTree t;
	libvirt_tree(t, "cpu io memory pids");
	VmWriteback w = vm_writeback(t.root(), 4242);
	CHECK(w.cgroup == "/machine.slice/machine-qemu\\x2d1\\x2dweb.scope/libvirt");
	CHECK(w.not_attributed.empty());
	CHECK(w.cgroup_id == inode_of(t.root() + "/sys/fs/cgroup" + w.cgroup));
	CHECK(w.cgroup_id != inode_of(t.root() + "/sys/fs/cgroup" + w.cgroup + "/emulator"));
}

TEST_CASE("vm_writeback: why a VM's writeback is not told apart", "[vm][writeback]")
{
	SECTION("no io controller in its cgroup")
	{
		TempTree t;
		libvirt_tree(t, "cpu memory pids");
		VmWriteback w = vm_writeback(t.root(), 4242);
		CHECK(w.cgroup_id == 0);
		CHECK(w.not_attributed == "its cgroup /machine.slice/machine-qemu\\x2d1\\x2dweb.scope/libvirt has no io "
					  "controller (enable it in the parent's cgroup.subtree_control)");
	}
	SECTION("neither memory nor io")
	{
		TempTree t;
		libvirt_tree(t, "cpu pids");
		CHECK(vm_writeback(t.root(), 4242).not_attributed.find("has no memory and io controller") !=
		      std::string::npos);
	}
	SECTION("the root cgroup")
	{
		TempTree t;
		t.put("sys/fs/cgroup/cgroup.controllers", "cpu io memory\n");
		t.put("proc/7/cgroup", "0::/\n");
		VmWriteback w = vm_writeback(t.root(), 7);
		CHECK(w.cgroup_id == 0);
		CHECK(w.not_attributed == "it runs in the root cgroup, with the host's own processes");
	}
	SECTION("cgroup v1 only, or hybrid (v2 without controllers at /sys/fs/cgroup/unified)")
	{
		TempTree t;
		t.put("proc/7/cgroup", "4:memory:/machine/web\n7:blkio:/machine/web\n");
		CHECK(vm_writeback(t.root(), 7).not_attributed ==
		      "no cgroup v2 (writeback is charged to cgroups only under cgroup v2)");
		t.put("proc/8/cgroup", "4:memory:/machine/web\n0::/\n");
		t.mkdir("sys/fs/cgroup/unified");
		CHECK(vm_writeback(t.root(), 8).not_attributed.find("cgroup v2 is not mounted at /sys/fs/cgroup") == 0);
	}
	SECTION("a process gone")
	{
		TempTree t;
		CHECK(vm_writeback(t.root(), 99).not_attributed == "its cgroup could not be read");
	}
}

TEST_CASE("buffered_images: files and disks open read-write without O_DIRECT", "[vm][writeback]")
{
	TempTree t;
	t.put("images/web.qcow2", "");
	t.put("images/data.raw", "");
	t.put("images/iso", "");
	t.put("log/web.log", "");
	const std::string proc = t.root() + "/proc/4242";
	std::filesystem::create_directories(proc + "/fd");
	auto fd = [&](int n, const std::string &target, const std::string &flags) {
		std::filesystem::create_symlink(target, proc + "/fd/" + std::to_string(n));
		t.put("proc/4242/fdinfo/" + std::to_string(n), "pos:\t0\nflags:\t" + flags + "\nmnt_id:\t28\n");
	};
	fd(3, t.root() + "/images/web.qcow2", "0100002");  // O_RDWR | O_LARGEFILE: cache=writeback
	fd(4, t.root() + "/images/data.raw", "0140002");   // O_RDWR | O_DIRECT: cache=none
	fd(5, t.root() + "/images/iso", "0100000");        // read-only
	fd(6, t.root() + "/log/web.log", "0102001");       // write-only, append: a log, not an image
	fd(7, "socket:[81234]", "02");                     // no such file: not a file or a disk
	fd(8, t.root() + "/images", "0200002");            // a directory
	CHECK(buffered_images(t.root(), 4242) == std::vector<std::string>{t.root() + "/images/web.qcow2"});
	// Both images with cache=writeback, the same one twice: each once, sorted.
	std::filesystem::remove(proc + "/fd/4");
	fd(4, t.root() + "/images/data.raw", "0100002");
	std::filesystem::remove(proc + "/fd/5");
	fd(5, t.root() + "/images/web.qcow2", "02");
	CHECK(buffered_images(t.root(), 4242) ==
	      std::vector<std::string>{t.root() + "/images/data.raw", t.root() + "/images/web.qcow2"});
	CHECK(buffered_images(t.root(), 4243).empty());
}
