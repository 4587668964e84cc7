// Helpers for the procfs/sysfs source tests: fixture paths, running one
// source against a tree, looking series and notes up, and scratch trees for
// host states a committed fixture cannot hold.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "derive_check.h"
#include "hwsig/derive.h"
#include "hwsig/fs.h"
#include "hwsig/procfs.h"

namespace procfs_test {

inline std::string fixture(const std::string &tree)
{
	return std::string(HWSIG_FIXTURES) + "/" + tree;
}

// The text of a fixture file, for feeding the pure parsers.
inline std::string fixture_text(const std::string &tree, const std::string &rel)
{
	auto r = hwsig::read_file(hwsig::join_path(fixture(tree), rel));
	if (!r.data)
		throw std::runtime_error("fixture " + tree + rel + " unreadable");
	return *r.data;
}

inline hwsig::Snapshot collect(hwsig::Source &source, const std::string &root,
			       const std::vector<hwsig::Vm> *vms = nullptr, std::uint64_t mono_ns = 0)
{
	hwsig::SourceContext ctx;
	ctx.root = root;
	ctx.vms = vms;
	hwsig::Snapshot snap;
	snap.mono_ns = mono_ns;
	source.collect(ctx, snap);
	return snap;
}

inline std::optional<double> counter(const hwsig::Snapshot &s, const char *name, const std::string &scope)
{
	const hwsig::CounterPoint *c = s.counter(name, scope);
	return c ? std::optional<double>(c->value) : std::nullopt;
}

inline std::optional<double> gauge(const hwsig::Snapshot &s, const char *name, const std::string &scope)
{
	const double *g = s.gauge(name, scope);
	return g ? std::optional<double>(*g) : std::nullopt;
}

// The reason a source gave for (id, scope); nullopt when it gave none.
inline std::optional<std::string> note(const hwsig::Snapshot &s, const std::string &id, const std::string &scope)
{
	for (const auto &u : s.unavailable())
		if (u.id == id && u.scope == scope)
			return u.reason;
	return std::nullopt;
}

inline std::size_t series_count(const hwsig::Snapshot &s)
{
	std::size_t n = 0;
	for (const auto &[name, series] : s.counters())
		n += series.by_scope.size();
	for (const auto &[name, series] : s.gauges())
		n += series.by_scope.size();
	return n;
}

inline const hwsig::Metric *metric(const hwsig::Interval &iv, const std::string &id, const std::string &scope)
{
	for (const auto &m : iv.metrics)
		if (m.id == id && m.scope == scope)
			return &m;
	return nullptr;
}

inline std::size_t metric_count(const hwsig::Interval &iv, const std::string &id)
{
	std::size_t n = 0;
	for (const auto &m : iv.metrics)
		n += m.id == id;
	return n;
}

// Runs a source on the "before" and "after" trees (2 s apart) and derives
// (checked: see derive_check.h).
inline hwsig::Interval derive_between(hwsig::Source &source, const std::string &before, const std::string &after,
				      const std::vector<hwsig::Vm> *vms = nullptr)
{
	auto a = collect(source, fixture(before), vms, 10'000'000'000ull);
	auto b = collect(source, fixture(after), vms, 12'000'000'000ull);
	return checked_derive(a, b, source.provides());
}

// A scratch root under $TMPDIR, removed with everything in it.
class TempTree {
public:
	TempTree()
	{
		std::string tmpl = (std::filesystem::temp_directory_path() / "hwsig-procfs-XXXXXX").string();
		if (!::mkdtemp(tmpl.data()))
			throw std::runtime_error("mkdtemp failed");
		root_ = tmpl;
	}
	TempTree(const TempTree &) = delete;
	TempTree &operator=(const TempTree &) = delete;
	~TempTree()
	{
		std::error_code ec;
		std::filesystem::remove_all(root_, ec);
	}

	void put(const std::string &rel, const std::string &text) const
	{
		std::filesystem::path p = std::filesystem::path(root_) / rel;
		std::filesystem::create_directories(p.parent_path());
		std::ofstream(p, std::ios::binary) << text;
	}
	void mkdir(const std::string &rel) const { std::filesystem::create_directories(std::filesystem::path(root_) / rel); }
	const std::string &root() const { return root_; }

private:
	std::string root_;
};

} // namespace procfs_test
