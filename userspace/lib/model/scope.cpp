// The string form of a scope, written and read (include/hwsig/scope.h).
#include "hwsig/scope.h"

#include <charconv>
#include <optional>

namespace hwsig {

namespace {

using Kind = Scope::Kind;

// The word before the first ':' of each kind's text.
struct Word {
	Kind kind;
	std::string_view text;
};
constexpr Word kWords[] = {
	{Kind::Cpu, "cpu"},   {Kind::Socket, "socket"}, {Kind::Node, "node"}, {Kind::Hugepages, "hugepages"},
	{Kind::Zone, "zone"}, {Kind::Dev, "dev"},       {Kind::Vm, "vm"},     {Kind::Vq, "vq"},
	{Kind::Pid, "pid"},   {Kind::Host, "host"},
};
constexpr std::string_view kHostWork[] = {"kernel", "vhost", "other"};

constexpr std::string_view kHugepagesSep = "/hugepages:";
constexpr std::string_view kVcpuSep = "/vcpu:";
constexpr std::string_view kCulpritSep = "/culprit:";
constexpr std::string_view kDevSep = "/dev:";

std::string_view word(Kind k)
{
	for (const Word &w : kWords)
		if (w.kind == k)
			return w.text;
	return {};
}

Kind kind_of_word(std::string_view text)
{
	for (const Word &w : kWords)
		if (w.text == text)
			return w.kind;
	return Kind::Unknown;
}

// A decimal number as str() writes it: digits, no leading zero, no sign.
std::optional<unsigned> number(std::string_view s)
{
	if (s.empty() || (s[0] == '0' && s.size() > 1))
		return std::nullopt;
	unsigned n = 0;
	auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
	if (ec != std::errc() || end != s.data() + s.size())
		return std::nullopt;
	return n;
}

void append(std::string &s, unsigned n)
{
	char buf[16];
	auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), n);
	s.append(buf, end);
}

} // namespace

// Parts are offsets into the text read, so that a Reading fills any copy.
struct Scope::Reading {
	Kind kind = Kind::Unknown, of = Kind::Unknown;
	Direction dir = Direction::Rx;
	HostWork host = HostWork::Kernel;
	unsigned n = 0, m = 0;
	Span name, sub;

	static Span span(std::size_t pos, std::size_t len)
	{
		return {static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(len)};
	}

	explicit Reading(std::string_view text)
	{
		if (text == "system" || text == "idle") {
			kind = text == "idle" ? Kind::Idle : Kind::System;
			return;
		}
		const std::size_t colon = text.find(':');
		if (colon == std::string_view::npos)
			return;
		const Kind k = kind_of_word(text.substr(0, colon));
		const std::size_t at = colon + 1;
		const std::string_view rest = text.substr(at);
		if (rest == "*" && k != Kind::Host) {
			kind = k == Kind::Unknown ? k : Kind::All;
			of = k;
			return;
		}
		switch (k) {
		case Kind::Cpu:
		case Kind::Socket:
		case Kind::Pid: read_number(k, rest); break;
		case Kind::Node: read_node(rest, at); break;
		case Kind::Hugepages:
		case Kind::Zone:
		case Kind::Dev: read_name(k, rest, at); break;
		case Kind::Vm: read_vm(rest, at); break;
		case Kind::Vq: read_vq(rest); break;
		case Kind::Host: read_host(rest); break;
		default: break;
		}
	}

	void read_number(Kind k, std::string_view rest)
	{
		if (auto v = number(rest)) {
			kind = k;
			n = *v;
		}
	}

	void read_name(Kind k, std::string_view rest, std::size_t at)
	{
		if (rest.empty())
			return;
		kind = k;
		name = span(at, rest.size());
	}

	void read_node(std::string_view rest, std::size_t at)
	{
		const std::size_t sep = rest.find(kHugepagesSep);
		if (sep == std::string_view::npos)
			return read_number(Kind::Node, rest);
		const std::string_view size = rest.substr(sep + kHugepagesSep.size());
		auto v = number(rest.substr(0, sep));
		if (!v || size.empty())
			return;
		kind = Kind::NodeHugepages;
		n = *v;
		sub = span(at + sep + kHugepagesSep.size(), size.size());
	}

	// The culprit first: its WHO is a whole scope ("vm:OTHER" may hold
	// anything); a disk's name holds no ':' (block_device.cpp), so its
	// "/dev:" is the last one.
	void read_vm(std::string_view rest, std::size_t at)
	{
		if (std::size_t sep = rest.find(kCulpritSep); sep != std::string_view::npos && sep > 0) {
			const std::string_view who = rest.substr(sep + kCulpritSep.size());
			// A VM culprit is read as a whole: its name may hold "/dev:" too.
			const Kind w = Reading(who).kind;
			const bool vm = who.size() > 3 && who.substr(0, 3) == "vm:";
			if (w == Kind::Host || w == Kind::Idle || vm) {
				kind = Kind::VmCulprit;
				name = span(at, sep);
				sub = span(at + sep + kCulpritSep.size(), who.size());
				return;
			}
		}
		if (std::size_t sep = rest.rfind(kDevSep); sep != std::string_view::npos && sep > 0) {
			const std::string_view disk = rest.substr(sep + kDevSep.size());
			if (!disk.empty()) {
				kind = Kind::VmDev;
				name = span(at, sep);
				sub = span(at + sep + kDevSep.size(), disk.size());
				return;
			}
		}
		if (std::size_t sep = rest.rfind(kVcpuSep); sep != std::string_view::npos && sep > 0) {
			if (auto v = number(rest.substr(sep + kVcpuSep.size()))) {
				kind = Kind::VmVcpu;
				name = span(at, sep);
				m = *v;
				return;
			}
		}
		read_name(Kind::Vm, rest, at);
	}

	void read_vq(std::string_view rest)
	{
		const std::size_t c1 = rest.find(':');
		const std::size_t c2 = c1 == std::string_view::npos ? c1 : rest.find(':', c1 + 1);
		if (c2 == std::string_view::npos)
			return;
		auto pid = number(rest.substr(0, c1));
		auto index = number(rest.substr(c1 + 1, c2 - c1 - 1));
		const std::string_view d = rest.substr(c2 + 1);
		if (!pid || !index || (d != "rx" && d != "tx"))
			return;
		kind = Kind::Vq;
		n = *pid;
		m = *index;
		dir = d == "tx" ? Direction::Tx : Direction::Rx;
	}

	void read_host(std::string_view rest)
	{
		for (std::size_t i = 0; i < std::size(kHostWork); ++i)
			if (rest == kHostWork[i]) {
				kind = Kind::Host;
				host = static_cast<HostWork>(i);
			}
	}
};

void Scope::assign(const Reading &r)
{
	kind_ = r.kind;
	of_ = r.of;
	dir_ = r.dir;
	host_ = r.host;
	n_ = r.n;
	m_ = r.m;
	name_ = r.name;
	sub_ = r.sub;
}

Scope Scope::parse(std::string_view text)
{
	Scope s;
	s.text_.assign(text);
	s.assign(Reading(text));
	return s;
}

Scope::Kind Scope::kind_of(std::string_view text)
{
	return Reading(text).kind;
}

namespace {

// word:N, for the kinds that are only a number.
Scope numbered(Kind k, unsigned n)
{
	std::string text(word(k));
	text += ':';
	append(text, n);
	return Scope::parse(text);
}

} // namespace

Scope Scope::system()
{
	return parse("system");
}

Scope Scope::cpu(unsigned n)
{
	Scope s;
	s.text_ = "cpu:";
	append(s.text_, n);
	s.kind_ = Kind::Cpu;
	s.n_ = n;
	return s;
}

Scope Scope::socket(unsigned n)
{
	return numbered(Kind::Socket, n);
}

Scope Scope::node(unsigned n)
{
	return numbered(Kind::Node, n);
}

Scope Scope::pid(unsigned n)
{
	return numbered(Kind::Pid, n);
}

Scope Scope::hugepages(std::string_view size)
{
	return parse(std::string("hugepages:").append(size));
}

Scope Scope::hugepages(std::string_view size, unsigned node)
{
	std::string text = "node:";
	append(text, node);
	return parse(text.append(kHugepagesSep).append(size));
}

Scope Scope::zone(std::string_view name)
{
	return parse(std::string("zone:").append(name));
}

Scope Scope::dev(std::string_view name)
{
	return parse(std::string("dev:").append(name));
}

// Not parse(): a name that reads back as a VM's vCPU, disk or culprit is
// still this VM's name here.
Scope Scope::vm(std::string_view name)
{
	Scope s;
	s.text_ = "vm:";
	s.text_ += name;
	if (!name.empty()) {
		s.kind_ = Kind::Vm;
		s.name_ = Reading::span(3, name.size());
	}
	return s;
}

Scope Scope::vq(unsigned pid, unsigned index, Direction d)
{
	Scope s;
	s.text_ = "vq:";
	append(s.text_, pid);
	s.text_ += ':';
	append(s.text_, index);
	s.text_ += d == Direction::Tx ? ":tx" : ":rx";
	s.kind_ = Kind::Vq;
	s.n_ = pid;
	s.m_ = index;
	s.dir_ = d;
	return s;
}

Scope Scope::host(HostWork w)
{
	return parse(std::string("host:").append(kHostWork[static_cast<std::size_t>(w)]));
}

Scope Scope::idle()
{
	return parse("idle");
}

Scope Scope::all(Kind k)
{
	return parse(std::string(word(k)).append(":*"));
}

Scope Scope::vcpu(unsigned n) const
{
	Scope s = *this;
	s.text_ += kVcpuSep;
	append(s.text_, n);
	s.kind_ = kind_ == Kind::Vm ? Kind::VmVcpu : Kind::Unknown;
	s.m_ = n;
	return s;
}

Scope Scope::culprit(const Scope &who) const
{
	Scope s = *this;
	s.text_ += kCulpritSep;
	s.sub_ = Reading::span(s.text_.size(), who.text_.size());
	s.text_ += who.text_;
	const bool culprit = who.kind_ == Kind::Vm || who.kind_ == Kind::Host || who.kind_ == Kind::Idle;
	s.kind_ = kind_ == Kind::Vm && culprit ? Kind::VmCulprit : Kind::Unknown;
	return s;
}

Scope Scope::disk(std::string_view name) const
{
	Scope s = *this;
	s.text_ += kDevSep;
	s.sub_ = Reading::span(s.text_.size(), name.size());
	s.text_ += name;
	s.kind_ = kind_ == Kind::Vm && !name.empty() ? Kind::VmDev : Kind::Unknown;
	return s;
}

bool Scope::of_vm() const
{
	return kind_ == Kind::Vm || kind_ == Kind::VmVcpu || kind_ == Kind::VmCulprit || kind_ == Kind::VmDev;
}

std::string_view Scope::dev() const
{
	if (kind_ == Kind::Dev)
		return part(name_);
	return kind_ == Kind::VmDev ? part(sub_) : std::string_view();
}

std::string_view Scope::hugepage_size() const
{
	if (kind_ == Kind::Hugepages)
		return part(name_);
	return kind_ == Kind::NodeHugepages ? part(sub_) : std::string_view();
}

} // namespace hwsig
