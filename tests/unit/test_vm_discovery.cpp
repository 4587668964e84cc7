// VM discovery: the pure parsers, then whole fixture trees.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hwsig/vm_discovery.h"
#include "hwsig/vm_parse.h"

using namespace hwsig;
using namespace hwsig::vmparse;
using namespace std::string_literals;
using Strings = std::vector<std::string>;

namespace {

std::string fixture(const char *tree)
{
	return std::string(HWSIG_FIXTURES) + "/" + tree;
}

const Vm *find_vm(const std::vector<Vm> &vms, const std::string &name)
{
	for (const auto &vm : vms)
		if (vm.name == name)
			return &vm;
	return nullptr;
}

} // namespace

TEST_CASE("split_cmdline: NUL-separated argv edge cases", "[vm][parse]")
{
	CHECK(split_cmdline("") == Strings{});
	CHECK(split_cmdline("qemu-kvm\0"s) == Strings{"qemu-kvm"});
	CHECK(split_cmdline("a\0b\0"s) == Strings{"a", "b"});
	// argv rewritten without the final NUL still ends the last element
	CHECK(split_cmdline("a\0b"s) == Strings{"a", "b"});
	// empty arguments are real arguments
	CHECK(split_cmdline("a\0\0b\0"s) == Strings{"a", "", "b"});
	CHECK(split_cmdline("\0"s) == Strings{""});
	CHECK(split_cmdline("\0\0"s) == Strings{"", ""});
	// setproctitle-style: one string with spaces is one argv element
	CHECK(split_cmdline("qemu-system-x86_64 -name x"s) == Strings{"qemu-system-x86_64 -name x"});
	CHECK(split_cmdline("\xff\xfe\0x\0"s) == Strings{"\xff\xfe", "x"});
}

TEST_CASE("is_qemu_comm", "[vm][parse]")
{
	CHECK(is_qemu_comm("qemu-system-x86"));
	CHECK(is_qemu_comm("qemu-system-aar"));
	CHECK(is_qemu_comm("qemu-kvm"));
	CHECK(is_qemu_comm("kvm"));
	CHECK_FALSE(is_qemu_comm("qemu-img"));
	CHECK_FALSE(is_qemu_comm("qemu-kvm "));
	CHECK_FALSE(is_qemu_comm("kvm-pit/2101"));
	CHECK_FALSE(is_qemu_comm("sudo"));
	CHECK_FALSE(is_qemu_comm(""));
}

TEST_CASE("parse_name_option follows QemuOpts", "[vm][parse]")
{
	CHECK(parse_name_option("guest=web01,debug-threads=on") == "web01");
	CHECK(parse_name_option("db02") == "db02");
	CHECK(parse_name_option("db02,debug-threads=on") == "db02");
	CHECK(parse_name_option("debug-threads=on,guest=x") == "x");
	CHECK(parse_name_option("process=p,guest=g") == "g");
	CHECK(parse_name_option("web01,process=qemu-web01") == "web01");
	// ",," is a literal comma, in the implied and in the explicit form
	CHECK(parse_name_option("a,,b,debug-threads=on") == "a,b");
	CHECK(parse_name_option("guest=a,,b") == "a,b");
	CHECK(parse_name_option("guest=x,,,,y") == "x,,y");
	// only the first '=' separates key and value
	CHECK(parse_name_option("guest=a=b") == "a=b");
	// the last guest= wins
	CHECK(parse_name_option("guest=x,guest=y") == "y");
	CHECK(parse_name_option("first,guest=second") == "second");
	// the first element without '=' is the guest name, whatever it reads
	CHECK(parse_name_option("debug-threads") == "debug-threads");
	CHECK(parse_name_option(",debug-threads=on") == "");
	CHECK_FALSE(parse_name_option("debug-threads=on").has_value());
	CHECK_FALSE(parse_name_option("process=foo").has_value());
	CHECK_FALSE(parse_name_option("").has_value());
}

TEST_CASE("parse_qemu_name scans argv like QEMU", "[vm][parse]")
{
	CHECK(parse_qemu_name({"qemu-system-x86_64", "-name", "guest=web01,debug-threads=on"}) == "web01");
	CHECK(parse_qemu_name({"qemu-system-x86_64", "--name", "db02"}) == "db02");
	CHECK(parse_qemu_name({"qemu-system-x86_64", "disk.img", "-name", "x"}) == "x");
	// repeated -name options merge: a later one without guest keeps the name
	CHECK(parse_qemu_name({"q", "-name", "a", "-name", "debug-threads=on"}) == "a");
	CHECK(parse_qemu_name({"q", "-name", "a", "-name", "b"}) == "b");
	// "-name" as the value of an option that takes an argument is no option
	CHECK(parse_qemu_name({"q", "-append", "-name", "-name", "real"}) == "real");
	CHECK_FALSE(parse_qemu_name({"q", "-kernel", "vmlinuz", "-append", "-name"}).has_value());
	// QEMU has no -name=X form, and an option needs its argument
	CHECK_FALSE(parse_qemu_name({"q", "-name=foo"}).has_value());
	CHECK_FALSE(parse_qemu_name({"q", "-name"}).has_value());
	// an empty guest name is no name
	CHECK_FALSE(parse_qemu_name({"q", "-name", "guest="}).has_value());
	// argv[0] is never an option
	CHECK_FALSE(parse_qemu_name({"-name", "x"}).has_value());
	CHECK_FALSE(parse_qemu_name({}).has_value());
}

TEST_CASE("thread, fd and status parsers", "[vm][parse]")
{
	CHECK(parse_vcpu_comm("CPU 0/KVM") == 0u);
	CHECK(parse_vcpu_comm("CPU 127/KVM") == 127u);
	CHECK_FALSE(parse_vcpu_comm("CPU 0/TCG").has_value());
	CHECK_FALSE(parse_vcpu_comm("CPU /KVM").has_value());
	CHECK_FALSE(parse_vcpu_comm("CPU -1/KVM").has_value());
	CHECK_FALSE(parse_vcpu_comm("CPU x/KVM").has_value());
	CHECK_FALSE(parse_vcpu_comm("CPU 1/KVM ").has_value());
	CHECK_FALSE(parse_vcpu_comm("CPU 99999999999/KVM").has_value());

	CHECK(parse_vhost_comm("vhost-2101") == 2101);
	CHECK_FALSE(parse_vhost_comm("vhost-").has_value());
	CHECK_FALSE(parse_vhost_comm("vhost-0").has_value());
	CHECK_FALSE(parse_vhost_comm("vhost-12a").has_value());
	CHECK_FALSE(parse_vhost_comm("vhost-99999999999").has_value());
	CHECK_FALSE(parse_vhost_comm("kvm-pit/2101").has_value());

	CHECK(parse_tun_fdinfo("pos:\t0\nflags:\t0100002\nmnt_id:\t25\nino:\t1032\niff:\tvnet0\n") == "vnet0");
	CHECK(parse_tun_fdinfo("iff:\ttap9") == "tap9");
	CHECK_FALSE(parse_tun_fdinfo("pos:\t0\nflags:\t02\n").has_value());
	CHECK_FALSE(parse_tun_fdinfo("iff:\t\n").has_value());
	CHECK_FALSE(parse_tun_fdinfo("iff:\ttwo words\n").has_value());
	CHECK_FALSE(parse_tun_fdinfo("iff:\tthis-name-is-far-too-long\n").has_value());
	CHECK_FALSE(parse_tun_fdinfo("iff:\ta/b\n").has_value());

	CHECK(parse_vcpu_fd_target("anon_inode:kvm-vcpu:3") == 3u);
	CHECK_FALSE(parse_vcpu_fd_target("anon_inode:kvm-vcpu:").has_value());
	CHECK_FALSE(parse_vcpu_fd_target("anon_inode:kvm-vm").has_value());

	CHECK(printable_name("evil\nname\x1b[31m") == "evil_name_[31m");
}

TEST_CASE("discover_vms on kvm-host: names, threads, vhost workers, taps", "[vm][fixture]")
{
	auto vms = discover_vms(fixture("kvm-host"));
	REQUIRE(vms.size() == 3);
	// sorted by name
	CHECK(vms[0].name == "db02");
	CHECK(vms[1].name == "pid-2301");
	CHECK(vms[2].name == "web01");

	const Vm *web = find_vm(vms, "web01");
	REQUIRE(web);
	CHECK(web->pid == 2101);
	CHECK(web->scope() == "vm:web01");
	CHECK(web->vcpu_tids == std::vector<int>{2110, 2111, 2112, 2113});
	// kernel 6.1 style: kthreads "vhost-2101", separate processes
	CHECK(web->vhost_tids == std::vector<int>{2140, 2141});
	// multiqueue vnet0 held twice counts once; libvirtd's own vnet9 is not the guest's
	CHECK(web->taps == Strings{"vnet0", "vnet1"});

	const Vm *db = find_vm(vms, "db02");
	REQUIRE(db);
	CHECK(db->pid == 2201);
	// no debug-threads=on: QEMU leaves its threads unnamed
	CHECK(db->vcpu_tids.empty());
	// kernel 6.4+ style: the worker is a thread of the QEMU process
	CHECK(db->vhost_tids == std::vector<int>{2230});
	// the second /dev/net/tun fd was never attached to an interface
	CHECK(db->taps == Strings{"tap7"});

	const Vm *anon = find_vm(vms, "pid-2301");
	REQUIRE(anon);
	CHECK(anon->pid == 2301);
	CHECK(anon->vcpu_tids.empty());
	CHECK(anon->vhost_tids == std::vector<int>{2330, 2331});
	CHECK(anon->taps == Strings{"tap9"});

	// zombie QEMU (3004), sudo/grep mentioning qemu, qemu-img, and a QEMU
	// renamed with -name ...,process=runner (3008: comm decides, its
	// cmdline is never read): none of them
	for (const auto &vm : vms) {
		CHECK(vm.pid != 3008);
		CHECK(vm.name != "renamed");
		CHECK(vm.pid != 3004);
		CHECK(vm.pid != 3003);
		CHECK(vm.pid != 3002);
		CHECK(vm.pid != 3006);
		CHECK(vm.name != "fake");
	}
}

TEST_CASE("discover_vm_details counts vCPU fds even for unnamed threads", "[vm][fixture]")
{
	auto details = discover_vm_details(fixture("kvm-host"));
	REQUIRE(details.size() == 3);
	CHECK(details[0].vm.name == "db02");
	CHECK(details[0].vcpu_fds == 2);
	CHECK(details[1].vm.name == "pid-2301");
	CHECK(details[1].vcpu_fds == 2);
	CHECK(details[2].vm.name == "web01");
	CHECK(details[2].vcpu_fds == 4);
	for (const auto &d : details)
		CHECK(d.fds_readable);
}

TEST_CASE("discover_vms on garbled input skips what it cannot read", "[vm][fixture]")
{
	std::vector<Vm> vms;
	REQUIRE_NOTHROW(vms = discover_vms(fixture("garbled")));
	REQUIRE(vms.size() == 6);
	// same -name twice: both kept, told apart by pid
	CHECK(vms[0].name == "dup@3170");
	CHECK(vms[0].pid == 3170);
	CHECK(vms[1].name == "dup@3171");
	CHECK(vms[1].pid == 3171);
	// control characters in the name are replaced
	CHECK(vms[2].name == "evil_name_[31m");
	CHECK(vms[2].pid == 3110);
	// -name after 11 KiB of -device options: the whole cmdline is read
	CHECK(vms[3].name == "longline");
	CHECK(vms[3].pid == 3180);
	// the old "kvm" binary name (a kernel thread "kvm", 3190, is not one)
	CHECK(vms[4].name == "old");
	CHECK(vms[4].pid == 3191);
	// garbled argv ending in a bare -name: no name
	const Vm &g = vms[5];
	CHECK(g.name == "pid-3101");
	CHECK(g.vcpu_tids == std::vector<int>{3102});
	CHECK(g.vhost_tids == std::vector<int>{3150});
	CHECK(g.taps == Strings{"ok0"});
	// vanished status (3120), vanished task/ (3130), dead (3140), no comm
	// (3105), kernel thread "kvm" (3190): skipped
	for (const auto &vm : vms) {
		CHECK(vm.pid != 3120);
		CHECK(vm.pid != 3130);
		CHECK(vm.pid != 3140);
		CHECK(vm.pid != 3105);
		CHECK(vm.pid != 3190);
	}
}

TEST_CASE("discover_vms on trees without guests", "[vm][fixture]")
{
	// captured from this development host: kernel threads, no QEMU
	CHECK(discover_vms(fixture("debian12-host")).empty());
	CHECK(discover_vms(fixture("no-such-tree")).empty());
}
