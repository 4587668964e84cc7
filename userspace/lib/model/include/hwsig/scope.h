// Where a series, metric or note applies: "system", "cpu:3", "vm:web01/vcpu:2"...
// A snapshot keys its series by the string form (str()), and every output
// prints it; this type is the one place that writes and reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace hwsig {

class Scope {
public:
	enum class Kind : std::uint8_t {
		Unknown,       // any other text (kept as it is: a newer writer's scope)
		System,        // system
		Cpu,           // cpu:N
		Socket,        // socket:N
		Node,          // node:N
		NodeHugepages, // node:N/hugepages:SIZE
		Hugepages,     // hugepages:SIZE, SIZE as "2048kB"
		Zone,          // zone:NAME (a thermal zone or hwmon sensor, NAME may hold '/')
		Dev,           // dev:NAME (a block device)
		Vm,            // vm:NAME
		VmVcpu,        // vm:NAME/vcpu:N
		VmCulprit,     // vm:NAME/culprit:WHO, WHO a Vm, Host or Idle scope
		VmDev,         // vm:NAME/dev:DISK (a VM's requests to one disk)
		Vq,            // vq:PID:INDEX:rx|tx (a virtqueue of QEMU process PID)
		Pid,           // pid:N
		Host,          // host:kernel, host:vhost, host:other (culprits only)
		Idle,          // idle (a culprit only)
		All,           // cpu:*, dev:*, vm:*...: every scope of all_of()'s kind (notes)
	};
	enum class Direction : std::uint8_t { Rx, Tx };
	// A host culprit: kernel threads, vhost workers, other processes.
	enum class HostWork : std::uint8_t { Kernel, Vhost, Other };

	Scope() = default; // Unknown, ""

	static Scope system();
	static Scope cpu(unsigned n);
	static Scope socket(unsigned n);
	static Scope node(unsigned n);
	static Scope hugepages(std::string_view size);
	static Scope hugepages(std::string_view size, unsigned node); // node:N/hugepages:SIZE
	static Scope zone(std::string_view name);
	static Scope dev(std::string_view name);
	static Scope vm(std::string_view name);
	static Scope vq(unsigned pid, unsigned index, Direction d);
	static Scope pid(unsigned n);
	static Scope host(HostWork w);
	static Scope idle();
	static Scope all(Kind k); // k one of Cpu, Socket, Node, Hugepages, Zone, Dev, Vm, Vq, Pid
	// The scopes below a vm:NAME one (on any other: kind Unknown).
	Scope vcpu(unsigned n) const;
	Scope culprit(const Scope &who) const;
	Scope disk(std::string_view name) const;

	// Any text; what is not a scope above has kind Unknown and keeps its
	// text. A VM name may hold ':' and '/': "vm:a/b" is the VM "a/b", but
	// one that ends in "/vcpu:N" or holds "/dev:" or "/culprit:" reads as
	// those. Numbers are decimal without leading zeros.
	static Scope parse(std::string_view text);
	// parse(text).kind(), without a copy of the text.
	static Kind kind_of(std::string_view text);

	Kind kind() const { return kind_; }
	const std::string &str() const & { return text_; }
	std::string str() && { return std::move(text_); } // Scope::cpu(n).str(): no copy
	bool operator==(const Scope &o) const { return text_ == o.text_; }

	// The parts, by kind; 0 or "" on a kind without that part.
	unsigned cpu() const { return kind_ == Kind::Cpu ? n_ : 0; }
	unsigned socket() const { return kind_ == Kind::Socket ? n_ : 0; }
	unsigned node() const { return kind_ == Kind::Node || kind_ == Kind::NodeHugepages ? n_ : 0; }
	unsigned pid() const { return kind_ == Kind::Pid || kind_ == Kind::Vq ? n_ : 0; } // a vq's QEMU
	unsigned vcpu() const { return kind_ == Kind::VmVcpu ? m_ : 0; }
	unsigned queue() const { return kind_ == Kind::Vq ? m_ : 0; } // a vq's index
	Direction direction() const { return dir_; }                  // a vq's
	HostWork host() const { return host_; }
	Kind all_of() const { return kind_ == Kind::All ? of_ : Kind::Unknown; }
	bool of_vm() const; // vm:NAME or one of the scopes below it
	std::string_view vm() const { return of_vm() ? part(name_) : std::string_view(); }
	std::string_view dev() const; // dev:NAME's NAME, vm:NAME/dev:DISK's DISK
	std::string_view zone() const { return kind_ == Kind::Zone ? part(name_) : std::string_view(); }
	std::string_view hugepage_size() const;
	// vm:NAME/culprit:WHO's WHO, as text and as a scope.
	std::string_view culprit() const
	{
		return kind_ == Kind::VmCulprit ? part(sub_) : std::string_view();
	}
	Scope culprit_scope() const { return parse(culprit()); }

private:
	struct Span {
		std::uint32_t pos = 0, len = 0;
	};
	struct Reading; // what parse() finds in a text (scope.cpp)

	std::string_view part(Span s) const { return std::string_view(text_).substr(s.pos, s.len); }
	void assign(const Reading &r);

	std::string text_;
	Kind kind_ = Kind::Unknown;
	Kind of_ = Kind::Unknown; // All's
	Direction dir_ = Direction::Rx;
	HostWork host_ = HostWork::Kernel;
	unsigned n_ = 0, m_ = 0; // the first and the second number
	Span name_, sub_;        // the first and the second name
};

} // namespace hwsig
