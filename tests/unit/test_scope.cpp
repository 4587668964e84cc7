// Scopes (scope.h): the strings every output prints, read back to the
// same kind and parts, and what is not a scope kept as Unknown.
#include <catch2/catch.hpp>

#include <string>

#include "hwsig/scope.h"

using namespace hwsig;
using Kind = Scope::Kind;

namespace {

// What reading a scope's own text gives: the same text, kind and parts.
void check_round_trip(const Scope &s)
{
	INFO(s.str());
	const Scope back = Scope::parse(s.str());
	CHECK(back.str() == s.str());
	CHECK(back.kind() == s.kind());
	CHECK(back.cpu() == s.cpu());
	CHECK(back.socket() == s.socket());
	CHECK(back.node() == s.node());
	CHECK(back.pid() == s.pid());
	CHECK(back.vcpu() == s.vcpu());
	CHECK(back.queue() == s.queue());
	CHECK(back.vm() == s.vm());
	CHECK(back.dev() == s.dev());
	CHECK(back.zone() == s.zone());
	CHECK(back.hugepage_size() == s.hugepage_size());
	CHECK(back.culprit() == s.culprit());
	CHECK(back.all_of() == s.all_of());
	CHECK(Scope::kind_of(s.str()) == s.kind());
}

} // namespace

TEST_CASE("scope: each kind's string, as every output prints it", "[scope]")
{
	const Scope web = Scope::vm("web01");
	using Work = Scope::HostWork;
	const struct {
		Scope scope;
		const char *text;
		Kind kind;
	} cases[] = {
		{Scope::system(), "system", Kind::System},
		{Scope::cpu(3), "cpu:3", Kind::Cpu},
		{Scope::cpu(255), "cpu:255", Kind::Cpu},
		{Scope::socket(1), "socket:1", Kind::Socket},
		{Scope::node(0), "node:0", Kind::Node},
		{Scope::hugepages("2048kB", 7), "node:7/hugepages:2048kB", Kind::NodeHugepages},
		{Scope::hugepages("1048576kB"), "hugepages:1048576kB", Kind::Hugepages},
		{Scope::zone("acpitz.1"), "zone:acpitz.1", Kind::Zone},
		{Scope::zone("coretemp.0/Core_3"), "zone:coretemp.0/Core_3", Kind::Zone},
		{Scope::dev("nvme0n1"), "dev:nvme0n1", Kind::Dev},
		{web, "vm:web01", Kind::Vm},
		{web.vcpu(2), "vm:web01/vcpu:2", Kind::VmVcpu},
		{web.culprit(Scope::vm("batch7")), "vm:web01/culprit:vm:batch7", Kind::VmCulprit},
		{web.culprit(Scope::host(Work::Kernel)), "vm:web01/culprit:host:kernel", Kind::VmCulprit},
		{web.culprit(Scope::host(Work::Vhost)), "vm:web01/culprit:host:vhost", Kind::VmCulprit},
		{web.culprit(Scope::host(Work::Other)), "vm:web01/culprit:host:other", Kind::VmCulprit},
		{web.culprit(Scope::idle()), "vm:web01/culprit:idle", Kind::VmCulprit},
		{web.disk("vdc"), "vm:web01/dev:vdc", Kind::VmDev},
		{Scope::vq(2101, 0, Scope::Direction::Rx), "vq:2101:0:rx", Kind::Vq},
		{Scope::vq(2101, 3, Scope::Direction::Tx), "vq:2101:3:tx", Kind::Vq},
		{Scope::pid(4242), "pid:4242", Kind::Pid},
		{Scope::host(Work::Other), "host:other", Kind::Host},
		{Scope::idle(), "idle", Kind::Idle},
		{Scope::all(Kind::Cpu), "cpu:*", Kind::All},
		{Scope::all(Kind::Dev), "dev:*", Kind::All},
		{Scope::all(Kind::Node), "node:*", Kind::All},
		{Scope::all(Kind::Vm), "vm:*", Kind::All},
	};
	for (const auto &c : cases) {
		INFO(c.text);
		CHECK(c.scope.str() == c.text);
		CHECK(c.scope.kind() == c.kind);
		check_round_trip(c.scope);
	}
}

TEST_CASE("scope: the parts of each kind", "[scope]")
{
	CHECK(Scope::parse("cpu:17").cpu() == 17);
	CHECK(Scope::parse("socket:1").socket() == 1);
	CHECK(Scope::parse("node:6").node() == 6);
	CHECK(Scope::parse("pid:4242").pid() == 4242);
	CHECK(Scope::parse("zone:coretemp.0/Core_3").zone() == "coretemp.0/Core_3");
	CHECK(Scope::parse("dev:sda").dev() == "sda");
	CHECK(Scope::parse("hugepages:2048kB").hugepage_size() == "2048kB");

	const Scope huge = Scope::parse("node:3/hugepages:2048kB");
	CHECK(huge.node() == 3);
	CHECK(huge.hugepage_size() == "2048kB");

	const Scope vcpu = Scope::parse("vm:web01/vcpu:12");
	CHECK(vcpu.vm() == "web01");
	CHECK(vcpu.vcpu() == 12);
	CHECK(vcpu.of_vm());

	const Scope blame = Scope::parse("vm:web01/culprit:vm:batch7");
	CHECK(blame.vm() == "web01");
	CHECK(blame.culprit() == "vm:batch7");
	CHECK(blame.culprit_scope().kind() == Kind::Vm);
	CHECK(blame.culprit_scope().vm() == "batch7");
	CHECK(Scope::parse("vm:web01/culprit:host:vhost").culprit_scope().host() == Scope::HostWork::Vhost);

	const Scope disk = Scope::parse("vm:db2/dev:vdc");
	CHECK(disk.vm() == "db2");
	CHECK(disk.dev() == "vdc");

	const Scope vq = Scope::parse("vq:2101:5:tx");
	CHECK(vq.pid() == 2101);
	CHECK(vq.queue() == 5);
	CHECK(vq.direction() == Scope::Direction::Tx);
	CHECK(Scope::parse("vq:2101:4:rx").direction() == Scope::Direction::Rx);

	CHECK(Scope::parse("dev:*").all_of() == Kind::Dev);
	// A part of another kind is empty: a cpu has no VM, a VM no cpu.
	CHECK(Scope::parse("cpu:3").vm().empty());
	CHECK(Scope::parse("vm:web01").cpu() == 0);
	CHECK_FALSE(Scope::parse("vq:2101:5:tx").of_vm());
}

TEST_CASE("scope: VM names may hold ':' and '/'", "[scope]")
{
	for (const char *name : {"a:b", "web/01", "x/dev", "q:/vcpu:", "vm:inner"}) {
		INFO(name);
		const Scope vm = Scope::vm(name);
		CHECK(vm.str() == std::string("vm:") + name);
		CHECK(vm.kind() == Kind::Vm);
		CHECK(vm.vm() == name);
		check_round_trip(vm);
		check_round_trip(vm.vcpu(4));
		CHECK(Scope::parse(vm.vcpu(4).str()).vm() == name);
		check_round_trip(vm.disk("sda"));
		CHECK(Scope::parse(vm.disk("sda").str()).vm() == name);
		check_round_trip(vm.culprit(Scope::vm(name)));
		CHECK(Scope::parse(vm.culprit(Scope::idle()).str()).vm() == name);
	}
	// The culprit is read first: a culprit VM's name may hold "/dev:" too.
	const Scope s = Scope::parse("vm:a/culprit:vm:b/dev:c");
	CHECK(s.kind() == Kind::VmCulprit);
	CHECK(s.vm() == "a");
	CHECK(s.culprit() == "vm:b/dev:c");
}

TEST_CASE("scope: what is not a scope is Unknown and keeps its text", "[scope]")
{
	for (const char *text :
	     {"", "vm:", "cpu:", "cpu:x", "cpu:-1", "cpu:03", "cpu:3x", "cpu:99999999999", "vq:1:2", "vq:1:2:up",
	      "vq:x:2:rx", "vq:1:2:rx:3", "node:1/hugepages:", "node:x/hugepages:2048kB", "hugepages:", "zone:",
	      "dev:", "host:", "host:user", "idle:", "System", "disk:sda", "nocolon", ":", "*:*", "host:*"}) {
		INFO('"' << text << '"');
		const Scope s = Scope::parse(text);
		CHECK(s.kind() == Kind::Unknown);
		CHECK(Scope::kind_of(text) == Kind::Unknown);
		CHECK(s.str() == text);
	}
	// A marker with a part that is not one is part of the VM's name.
	CHECK(Scope::parse("vm:a/vcpu:x").vm() == "a/vcpu:x");
	CHECK(Scope::parse("vm:a/culprit:nobody").vm() == "a/culprit:nobody");
	CHECK(Scope::parse("vm:a/dev:").vm() == "a/dev:");
	CHECK(Scope::parse("vm:a/culprit:vm:").vm() == "a/culprit:vm:");
	// Built from what is not a VM scope, or with an empty name: Unknown too.
	CHECK(Scope::cpu(1).vcpu(2).kind() == Kind::Unknown);
	CHECK(Scope::vm("").kind() == Kind::Unknown);
	CHECK(Scope::vm("a").disk("").kind() == Kind::Unknown);
	CHECK(Scope::vm("a").culprit(Scope::cpu(1)).kind() == Kind::Unknown);
	CHECK(Scope::dev("").kind() == Kind::Unknown);
}
