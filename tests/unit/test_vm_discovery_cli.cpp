// `hwsigctl vms` end to end: runs the built binary on fixture trees and
// compares its whole output.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "hwsig/fs.h"

namespace {

// The build puts hwsigctl at the top of the build tree, two levels above
// this test binary (tests/unit/hwsig_unit).
std::string hwsigctl_path()
{
	char buf[4096];
	ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	REQUIRE(n > 0);
	std::string self(buf, static_cast<std::size_t>(n));
	std::string dir = self.substr(0, self.rfind('/'));
	return dir + "/../../hwsigctl";
}

struct Run {
	std::string out;
	int rc = -1;
};

// stdout only; stderr goes to /dev/null unless asked for.
Run run(const std::string &args, bool stderr_too = false)
{
	std::string bin = hwsigctl_path();
	INFO("hwsigctl at " << bin);
	REQUIRE(hwsig::path_exists(bin));
	std::string cmd = "'" + bin + "' " + args + (stderr_too ? " 2>&1" : " 2>/dev/null");
	FILE *p = ::popen(cmd.c_str(), "r");
	REQUIRE(p);
	Run r;
	char buf[4096];
	std::size_t got;
	while ((got = std::fread(buf, 1, sizeof(buf), p)) > 0)
		r.out.append(buf, got);
	int status = ::pclose(p);
	r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return r;
}

std::string fixture(const char *tree)
{
	return std::string(HWSIG_FIXTURES) + "/" + tree;
}

} // namespace

TEST_CASE("hwsigctl vms prints the kvm-host guests as a table", "[vm][cli]")
{
	auto r = run("vms --root '" + fixture("kvm-host") + "'");
	CHECK(r.rc == 0);
	CHECK(r.out == "NAME       PID  VCPUS  VHOST  TAPS\n"
		       "db02      2201     2*      1  tap7\n"
		       "pid-2301  2301     2*      2  tap9\n"
		       "web01     2101      4      2  vnet0,vnet1\n"
		       "* vCPU threads unnamed (start QEMU with -name NAME,debug-threads=on):\n"
		       "  counted from kvm-vcpu fds; per-vCPU scheduling metrics are unavailable\n");
}

TEST_CASE("hwsigctl vms --format json prints one object per guest per line", "[vm][cli]")
{
	auto r = run("vms --format json --root '" + fixture("kvm-host") + "'");
	CHECK(r.rc == 0);
	CHECK(r.out ==
	      "{\"name\":\"db02\",\"scope\":\"vm:db02\",\"pid\":2201,\"vcpu_tids\":[],\"vcpu_fds\":2,"
	      "\"vhost_tids\":[2230],\"taps\":[\"tap7\"],\"fds_readable\":true}\n"
	      "{\"name\":\"pid-2301\",\"scope\":\"vm:pid-2301\",\"pid\":2301,\"vcpu_tids\":[],\"vcpu_fds\":2,"
	      "\"vhost_tids\":[2330,2331],\"taps\":[\"tap9\"],\"fds_readable\":true}\n"
	      "{\"name\":\"web01\",\"scope\":\"vm:web01\",\"pid\":2101,\"vcpu_tids\":[2110,2111,2112,2113],"
	      "\"vcpu_fds\":4,\"vhost_tids\":[2140,2141],\"taps\":[\"vnet0\",\"vnet1\"],\"fds_readable\":true}\n");
}

TEST_CASE("hwsigctl vms without guests, and bad options", "[vm][cli]")
{
	auto table = run("vms --root '" + fixture("debian12-host") + "'");
	CHECK(table.rc == 0);
	CHECK(table.out == "no QEMU/KVM guests found\n");
	// JSON keeps stdout parseable: nothing there, the message on stderr
	auto json = run("vms -f json --root '" + fixture("debian12-host") + "'");
	CHECK(json.rc == 0);
	CHECK(json.out.empty());
	auto json_all = run("vms -f json --root '" + fixture("debian12-host") + "'", true);
	CHECK(json_all.out == "no QEMU/KVM guests found\n");

	auto bad = run("vms --format xml", true);
	CHECK(bad.rc == 2);
	CHECK(bad.out.find("--format must be 'table' or 'json'") != std::string::npos);
	auto help = run("vms --help");
	CHECK(help.rc == 0);
	CHECK(help.out.find("JSON Lines") != std::string::npos);
	CHECK(help.out.find("hwsigctl vms --format json") != std::string::npos);
}
