// Source "sysfs.thermal": thermal headroom (throttle point - temperature) of
// every thermal zone and hwmon temperature sensor, and their minimum.
// Documentation/thermal.rst defines the metric and the precedence rules.
//
// What does not change between snapshots (which sensors exist, their names,
// labels, trip points and limits) is scanned into a Layout at most every
// rescan interval; each collect reads only the temperatures.
#include "hwsig/thermal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <map>
#include <set>

#include "hwsig/cpu_identity.h"
#include "hwsig/error.h"
#include "hwsig/fd.h"
#include "hwsig/fs.h"
#include "hwsig/parse.h"
#include "hwsig/scope.h"
#include "hwsig/series.h"

namespace hwsig::thermal {

namespace {

constexpr double kAbsoluteZeroC = -273.15;
// No silicon sensor reads above this; drivers use larger values as markers.
constexpr double kMaxPlausibleC = 500.0;

} // namespace

std::optional<double> parse_millicelsius(std::string_view text)
{
	auto milli = parse_i64(text);
	if (!milli)
		return std::nullopt;
	double c = static_cast<double>(*milli) / 1000.0;
	if (c < kAbsoluteZeroC || c > kMaxPlausibleC)
		return std::nullopt;
	return c;
}

std::optional<double> parse_limit_millicelsius(std::string_view text)
{
	auto c = parse_millicelsius(text);
	if (!c || *c <= 0.0)
		return std::nullopt;
	return c;
}

TripType parse_trip_type(std::string_view text)
{
	auto t = trim(text);
	if (t == "passive")
		return TripType::Passive;
	if (t == "hot")
		return TripType::Hot;
	if (t == "critical")
		return TripType::Critical;
	if (t == "active")
		return TripType::Active;
	return TripType::Unknown;
}

std::optional<double> zone_throttle_c(const std::vector<Trip> &trips)
{
	for (auto wanted : {TripType::Passive, TripType::Hot, TripType::Critical}) {
		std::optional<double> lowest;
		for (const auto &t : trips)
			if (t.type == wanted && std::isfinite(t.temp_c) && (!lowest || t.temp_c < *lowest))
				lowest = t.temp_c;
		if (lowest)
			return lowest;
	}
	return std::nullopt;
}

std::optional<double> hwmon_throttle_c(std::string_view device, std::optional<double> max_c,
				       std::optional<double> crit_c)
{
	// A crit under max is not TjMax: the max, as for other drivers.
	if (device == "coretemp" && crit_c && (!max_c || *crit_c >= *max_c))
		return crit_c;
	return max_c ? max_c : crit_c;
}

std::string scope_component(std::string_view name)
{
	std::string out(trim(name));
	for (auto &c : out) {
		auto u = static_cast<unsigned char>(c);
		if (u <= ' ' || u == 0x7f || c == '/')
			c = '_';
	}
	return out;
}

std::vector<std::string> disambiguate(const std::vector<std::string> &names)
{
	std::map<std::string, unsigned> total, next;
	std::set<std::string> taken;
	for (const auto &n : names)
		total[n]++;
	for (const auto &n : names)
		if (total[n] == 1)
			taken.insert(n);
	std::vector<std::string> out;
	out.reserve(names.size());
	for (const auto &n : names) {
		if (total[n] == 1) {
			out.push_back(n);
			continue;
		}
		// Skip suffixes another sensor already carries as its own name
		// (a zone literally typed "acpitz.0").
		std::string candidate;
		do
			candidate = n + "." + std::to_string(next[n]++);
		while (taken.count(candidate));
		taken.insert(candidate);
		out.push_back(std::move(candidate));
	}
	return out;
}

} // namespace hwsig::thermal

namespace hwsig {

namespace {

using namespace thermal;

constexpr const char *kMetric = series::kThermalHeadroom;
constexpr const char *kSourceKind = "sysfs";
// With the coretemp throttle points lowered by the TCC activation offset
// read from MSR 0x1A2 (tcc_offset_c()).
constexpr const char *kSourceKindMsr = "sysfs+msr";

// "thermal_zone12" -> 12 for numeric ordering (list_dir sorts as text).
std::optional<unsigned> index_after(std::string_view entry, std::string_view prefix)
{
	if (!entry.starts_with(prefix) || entry.size() == prefix.size())
		return std::nullopt;
	auto n = parse_u64(entry.substr(prefix.size()));
	if (!n || *n > UINT_MAX || !std::all_of(entry.begin() + prefix.size(), entry.end(),
						  [](char c) { return c >= '0' && c <= '9'; }))
		return std::nullopt;
	return static_cast<unsigned>(*n);
}

std::vector<std::pair<unsigned, std::string>> numbered_entries(const std::string &dir, std::string_view prefix)
{
	std::vector<std::pair<unsigned, std::string>> out;
	for (auto &e : list_dir(dir, prefix))
		if (auto n = index_after(e, prefix))
			out.emplace_back(*n, std::move(e));
	std::sort(out.begin(), out.end());
	return out;
}

std::string read_link_basename(const std::string &path)
{
	char buf[4096];
	ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
	if (n <= 0 || static_cast<std::size_t>(n) >= sizeof(buf))
		return {};
	std::string_view target(buf, static_cast<std::size_t>(n));
	auto slash = target.rfind('/');
	return std::string(slash == std::string_view::npos ? target : target.substr(slash + 1));
}

// A CPU of package `package` (cpu_socket(): its topology in sysfs).
std::optional<unsigned> package_cpu(const std::string &root, unsigned package)
{
	for (const auto &[n, entry] : numbered_entries(join_path(root, "sys/devices/system/cpu"), "cpu"))
		if (cpu_socket(root, n) == package)
			return n;
	return std::nullopt;
}

// The TCC activation offset of `package` in degrees: bits 29:24 of
// MSR_IA32_TEMPERATURE_TARGET (0x1A2), through the msr driver's
// /dev/cpu/N/msr of one of its CPUs. Firmware sets it to throttle below
// TjMax. nullopt where the driver is not loaded, not allowed (root with
// CAP_SYS_RAWIO), or the MSR cannot be read.
std::optional<unsigned> tcc_offset_c(const std::string &root, unsigned package)
{
	auto cpu = package_cpu(root, package);
	if (!cpu)
		return std::nullopt;
	Fd fd(::open(join_path(root, "/dev/cpu/" + std::to_string(*cpu) + "/msr").c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd)
		return std::nullopt;
	std::uint64_t value = 0;
	if (::pread(fd.get(), &value, sizeof(value), 0x1A2) != static_cast<ssize_t>(sizeof(value)))
		return std::nullopt;
	return static_cast<unsigned>((value >> 24) & 0x3f);
}

// "Package id 3" (coretemp's package sensor label) -> 3.
std::optional<unsigned> package_of_label(std::string_view label)
{
	constexpr std::string_view prefix = "Package id ";
	label = trim(label);
	if (!label.starts_with(prefix))
		return std::nullopt;
	auto n = parse_u64(label.substr(prefix.size()));
	return n && *n <= UINT_MAX ? std::optional<unsigned>(static_cast<unsigned>(*n)) : std::nullopt;
}

// A short, printable excerpt of garbage for a note.
std::string excerpt(std::string_view s)
{
	std::string out;
	for (unsigned char c : trim(s).substr(0, 24))
		out += (c < ' ' || c >= 0x7f) ? '?' : static_cast<char>(c);
	return out;
}

struct Note {
	std::string scope, reason;
};

// One sensor whose temperature is read on every collect.
struct Slot {
	std::string scope;      // "zone:acpitz.1", "zone:coretemp.0/Core_3"
	std::size_t dir = 0;    // index into Layout::dirs
	std::string temp_file;  // "temp" or "tempN_input"
	std::string shown;      // "thermal_zone1/temp" in notes
	std::string fault_file; // hwmon "tempN_fault" when the driver has one
	double throttle_c = 0;
};

// Everything the directories say that stays put between snapshots.
struct Layout {
	// Open directories of the zones and hwmon devices: each collect opens
	// its files relative to them (openat), sparing the walk through
	// /sys/class symlinks. A removed device makes openat fail with ENOENT.
	std::vector<Fd> dirs;
	std::vector<Slot> slots;
	std::vector<Note> notes; // sensors without a throttle point
	bool any_sensor = false; // a zone or hwmon temperature exists at all
	bool tcc_offset_read = false; // a coretemp throttle point is TjMax - the MSR's offset

	// A directory that cannot be opened stays an empty Fd: its sensors
	// then read as ENOENT (see read_at).
	std::size_t add_dir(const std::string &path)
	{
		dirs.emplace_back(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		return dirs.size() - 1;
	}
};

// A small sysfs file relative to an open directory, in one read().
FileRead read_at(const Fd &dir, const std::string &name)
{
	FileRead r;
	if (!dir) {
		r.err = ENOENT;
		return r;
	}
	Fd fd(::openat(dir.get(), name.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd) {
		r.err = errno;
		return r;
	}
	char buf[4096];
	ssize_t n;
	do
		n = ::read(fd.get(), buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r.err = errno;
		return r;
	}
	if (static_cast<std::size_t>(n) == sizeof(buf)) {
		r.err = EFBIG; // a page of text is no temperature
		return r;
	}
	r.data = std::string(buf, static_cast<std::size_t>(n));
	return r;
}

// Thermal zones into the layout. zone_types gets the raw types (hwmon
// mirrors of zones are recognised by them).
void scan_zones(const std::string &root, Layout &layout, std::vector<std::string> &zone_types)
{
	const std::string dir = join_path(root, "sys/class/thermal");
	auto zones = numbered_entries(dir, "thermal_zone");
	std::vector<std::string> names, types;
	for (const auto &[n, entry] : zones) {
		auto type = read_trimmed(dir + "/" + entry + "/type");
		std::string component = type ? scope_component(*type) : std::string();
		types.push_back(type ? *type : std::string());
		if (type)
			zone_types.push_back(*type);
		names.push_back(component.empty() ? entry : component);
	}
	names = disambiguate(names);
	layout.any_sensor |= !zones.empty();

	for (std::size_t i = 0; i < zones.size(); i++) {
		const std::string &entry = zones[i].second;
		const std::string zdir = dir + "/" + entry;
		const std::string scope = Scope::zone(names[i]).str();
		if (types[i] == "x86_pkg_temp") {
			// Its trip points are thresholds thermald programs to be
			// notified at, not where the package throttles; coretemp's
			// package sensor has that point (TjMax).
			layout.notes.push_back({scope, entry + " (x86_pkg_temp): its trip points are thermald's "
							       "notification thresholds, not throttle points; see "
							       "coretemp's Package sensor"});
			continue;
		}
		// trip_point_K_type names the trips; trip_point_K_temp (and
		// _hyst) sit next to them.
		std::vector<Trip> trips;
		for (const auto &tname : list_dir(zdir, "trip_point_")) {
			constexpr std::string_view suffix = "_type";
			if (!std::string_view(tname).ends_with(suffix))
				continue;
			std::string stem = tname.substr(0, tname.size() - suffix.size());
			auto ttype = read_trimmed(zdir + "/" + tname);
			auto ttemp = read_file(zdir + "/" + stem + "_temp", 4096);
			if (!ttype || !ttemp.data)
				continue;
			auto limit = parse_limit_millicelsius(*ttemp.data);
			if (!limit)
				continue; // unprogrammed or invalid trip
			trips.push_back({parse_trip_type(*ttype), *limit});
		}
		auto throttle = zone_throttle_c(trips);
		if (!throttle) {
			layout.notes.push_back(
				{scope, entry + " has no passive, hot or critical trip point with a valid temperature"});
			continue;
		}
		layout.slots.push_back({scope, layout.add_dir(zdir), "temp", entry + "/temp", {}, *throttle});
	}
}

// The kernel registers an hwmon device for each thermal zone type
// (thermal_hwmon: same name with '-' made '_', parent = the zone). The zone
// itself is read with its trip points, so the mirror is skipped.
bool is_zone_mirror(const std::string &hwmon_dir, const std::string &name, const std::vector<std::string> &zone_types)
{
	auto parent = read_link_basename(hwmon_dir + "/device");
	if (parent.starts_with("thermal_zone"))
		return true;
	if (!parent.empty())
		return false;
	for (auto type : zone_types) {
		std::replace(type.begin(), type.end(), '-', '_');
		if (type == name)
			return true;
	}
	return false;
}

// driver: the device's name attribute ("coretemp"); device_name: that name
// made unique among the host's devices ("coretemp.1"), for scopes.
void scan_hwmon_device(const std::string &root, const std::string &attr_dir, const std::string &entry,
		       const std::string &driver, const std::string &device_name, Layout &layout)
{
	// Only files the directory lists are opened: most sensors lack _fault,
	// many lack _max or _crit.
	const auto listed = list_dir(attr_dir, "temp");
	const std::set<std::string, std::less<>> present(listed.begin(), listed.end());
	auto has = [&](unsigned index, std::string_view attr) {
		return present.count("temp" + std::to_string(index) + "_" + std::string(attr)) > 0;
	};
	auto read_attr = [&](unsigned index, std::string_view attr) -> std::optional<std::string> {
		if (!has(index, attr))
			return std::nullopt;
		return read_file(attr_dir + "/temp" + std::to_string(index) + "_" + std::string(attr), 4096).data;
	};
	struct Sensor {
		unsigned index;
		std::string component;
	};
	std::vector<Sensor> sensors;
	std::optional<unsigned> package;
	for (const auto &file : listed) {
		constexpr std::string_view suffix = "_input";
		std::string_view f(file);
		if (!f.ends_with(suffix))
			continue;
		auto index = index_after(f.substr(0, f.size() - suffix.size()), "temp");
		if (!index)
			continue;
		auto label = read_attr(*index, "label");
		if (label && !package)
			package = package_of_label(*label);
		std::string component = label ? scope_component(*label) : std::string();
		sensors.push_back({*index, component.empty() ? "temp" + std::to_string(*index) : component});
	}
	std::sort(sensors.begin(), sensors.end(), [](auto &a, auto &b) { return a.index < b.index; });
	std::vector<std::string> components;
	for (const auto &s : sensors)
		components.push_back(s.component);
	components = disambiguate(components);
	layout.any_sensor |= !sensors.empty();

	// coretemp's crit is TjMax; firmware may throttle below it by the TCC
	// activation offset, which only the MSR tells.
	std::optional<unsigned> offset;
	if (driver == "coretemp" && package)
		offset = tcc_offset_c(root, *package);

	std::vector<std::string> without_limit;
	std::optional<std::size_t> dir;
	for (std::size_t i = 0; i < sensors.size(); i++) {
		const unsigned index = sensors[i].index;
		const std::string file = "temp" + std::to_string(index);
		std::optional<double> max_c, crit_c;
		if (auto max = read_attr(index, "max"))
			max_c = parse_limit_millicelsius(*max);
		if (auto crit = read_attr(index, "crit"))
			crit_c = parse_limit_millicelsius(*crit);
		auto throttle = hwmon_throttle_c(driver, max_c, crit_c);
		if (!throttle) {
			without_limit.push_back(components[i]);
			continue;
		}
		if (offset && crit_c && *throttle == *crit_c && *offset < *crit_c) {
			*throttle -= *offset;
			layout.tcc_offset_read = true;
		}
		if (!dir)
			dir = layout.add_dir(attr_dir);
		layout.slots.push_back({Scope::zone(device_name + "/" + components[i]).str(), *dir, file + "_input",
					entry + "/" + file + "_input", has(index, "fault") ? file + "_fault" : std::string(),
					*throttle});
	}
	if (!without_limit.empty()) {
		std::string list;
		for (const auto &c : without_limit)
			list += (list.empty() ? "" : ", ") + c;
		layout.notes.push_back(
			{Scope::zone(device_name).str(), "temperature only, the driver gives no max or crit limit: " + list});
	}
}

void scan_hwmon(const std::string &root, const std::vector<std::string> &zone_types, Layout &layout)
{
	const std::string dir = join_path(root, "sys/class/hwmon");
	struct Device {
		std::string entry, attr_dir, name;
	};
	std::vector<Device> devices;
	for (const auto &[n, entry] : numbered_entries(dir, "hwmon")) {
		Device d{entry, dir + "/" + entry, {}};
		auto name = read_trimmed(d.attr_dir + "/name");
		if (!name) {
			// Drivers older than the hwmon attribute groups kept their
			// files in the parent device.
			if (auto old = read_trimmed(d.attr_dir + "/device/name")) {
				name = old;
				d.attr_dir += "/device";
			}
		}
		if (name && is_zone_mirror(dir + "/" + entry, *name, zone_types))
			continue;
		d.name = name ? scope_component(*name) : std::string();
		if (d.name.empty())
			d.name = entry;
		devices.push_back(std::move(d));
	}
	std::vector<std::string> names;
	for (const auto &d : devices)
		names.push_back(d.name);
	names = disambiguate(names);
	for (std::size_t i = 0; i < devices.size(); i++)
		scan_hwmon_device(root, devices[i].attr_dir, devices[i].entry, devices[i].name, names[i], layout);
}

Layout scan(const std::string &root)
{
	Layout layout;
	std::vector<std::string> zone_types;
	scan_zones(root, layout, zone_types);
	scan_hwmon(root, zone_types, layout);
	return layout;
}

class ThermalSource final : public Source {
public:
	explicit ThermalSource(double rescan_interval_s)
		: rescan_interval_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
			  std::chrono::duration<double>(rescan_interval_s)))
	{
	}

	std::string_view name() const override { return "sysfs.thermal"; }
	std::vector<std::string> provides() const override { return {kMetric}; }

	void collect(const SourceContext &ctx, Snapshot &snap) override
	{
		const auto now = std::chrono::steady_clock::now();
		if (!layout_ || stale_ || root_ != ctx.root || now - scanned_at_ >= rescan_interval_) {
			layout_ = scan(ctx.root);
			root_ = ctx.root;
			scanned_at_ = now;
			stale_ = false;
		}

		const char *source = layout_->tcc_offset_read ? kSourceKindMsr : kSourceKind;
		std::optional<double> lowest;
		for (const auto &slot : layout_->slots) {
			const Fd &dir = layout_->dirs[slot.dir];
			if (!slot.fault_file.empty()) {
				auto fault = read_at(dir, slot.fault_file);
				if (fault.data && trim(*fault.data) == "1") {
					snap.add_unavailable(kMetric, slot.scope, UnavailableCode::read_error,
							     slot.shown.substr(0, slot.shown.size() - 6) +
								     "_fault: the sensor reports a fault");
					continue;
				}
			}
			auto r = read_at(dir, slot.temp_file);
			if (!r.data) {
				// A sensor that is gone (hot-unplug, driver unbound)
				// means the layout is out of date: rescan next time.
				const bool gone = r.err == ENOENT || r.err == ENODEV;
				stale_ |= gone;
				snap.add_unavailable(kMetric, slot.scope, gone ? UnavailableCode::incomplete : errno_code(r.err),
						     Error("reading " + slot.shown, r.err).what());
				continue;
			}
			auto temp = parse_millicelsius(*r.data);
			if (!temp) {
				snap.add_unavailable(kMetric, slot.scope, UnavailableCode::malformed,
						     slot.shown + " is not a temperature in millidegrees: \"" +
							     excerpt(*r.data) + "\"");
				continue;
			}
			double headroom = slot.throttle_c - *temp;
			snap.add_gauge(kMetric, slot.scope, headroom, source);
			if (!lowest || headroom < *lowest)
				lowest = headroom;
		}
		for (const auto &note : layout_->notes)
			snap.add_unavailable(kMetric, note.scope, UnavailableCode::unsupported, note.reason); // no throttle point

		if (lowest)
			snap.add_gauge(kMetric, "system", *lowest, source);
		else if (!layout_->any_sensor)
			snap.add_unavailable(kMetric, "system", UnavailableCode::unsupported,
					     "no thermal zones or hwmon temperature sensors (typical inside a VM)");
		else
			snap.add_unavailable(kMetric, "system", UnavailableCode::unsupported,
					     "no sensor has both a readable temperature and a throttle point");
	}

private:
	std::chrono::steady_clock::duration rescan_interval_;
	std::optional<Layout> layout_;
	std::string root_;
	std::chrono::steady_clock::time_point scanned_at_{};
	bool stale_ = false;
};

} // namespace

SourcePtr make_thermal_source(double rescan_interval_s)
{
	return std::make_unique<ThermalSource>(rescan_interval_s);
}

} // namespace hwsig
