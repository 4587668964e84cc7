#include "hwsig/dump_capture.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "hwsig/catalog.h"
#include "hwsig/cpu_identity.h"
#include "hwsig/error.h"
#include "hwsig/fs.h"
#include "hwsig/kmod.h"
#include "hwsig/perf_open.h"
#include "hwsig/pmu_devices.h"
#include "hwsig/pmu_plan.h"

namespace hwsig {

namespace {

const char *vendor_name(CpuVendor v)
{
	switch (v) {
	case CpuVendor::Intel:
		return "intel";
	case CpuVendor::Amd:
		return "amd";
	case CpuVendor::Unknown:
		break;
	}
	return "unknown";
}

// The PMU an event's type names: a sysfs PMU's name, or for perf's generic
// types (which the kernel maps to the core PMU) the generic name.
std::string pmu_of_type(const PmuDevices &pmus, std::uint32_t type)
{
	for (const auto &d : pmus.devices())
		if (d.type == type)
			return d.name;
	switch (type) {
	case 0:
		return "hardware"; // PERF_TYPE_HARDWARE
	case 1:
		return "software";
	case 3:
		return "hw_cache";
	case 4:
		return "raw";
	}
	return std::to_string(type);
}

// Whether this host takes the event at all: opened on CPU 0 and closed at
// once (what a plan line is worth on a host without a PMU is exactly
// this: cycles refused with ENOENT).
std::string probe(const PerfEventSpec &spec)
{
	try {
		PerfGroup::open({spec}, 0);
		return "planned, opens";
	} catch (const Error &e) {
		return "planned, refused " + errno_name(e.err()) + " (perf_event_open on cpu 0)";
	}
}

// One word per event from GET_STATUS: "active N/M" when every CPU it was
// meant for counts, "refused ERRNO K/M" naming the first error otherwise.
std::vector<std::string> event_states(const KmodStatus &st, std::size_t n)
{
	struct Count {
		unsigned active = 0, total = 0;
		int first_error = 0;
	};
	std::vector<Count> c(n);
	for (const auto &e : st.entries) {
		if (e.event_index >= n)
			continue;
		auto &x = c[e.event_index];
		x.total++;
		if (e.error == 0)
			x.active++;
		else if (!x.first_error)
			x.first_error = -e.error;
	}
	std::vector<std::string> out;
	for (const auto &x : c) {
		if (x.total == 0)
			out.push_back("unknown");
		else if (x.active == x.total)
			out.push_back("active " + std::to_string(x.active) + "/" + std::to_string(x.total));
		else
			out.push_back("refused " + errno_name(x.first_error) + " " + std::to_string(x.total - x.active) + "/" +
				      std::to_string(x.total));
	}
	return out;
}

} // namespace

std::vector<std::pair<std::string, std::string>> host_facts(const std::string &root)
{
	std::vector<std::pair<std::string, std::string>> f;
	struct utsname u;
	if (::uname(&u) == 0) {
		f.emplace_back("hostname", u.nodename);
		f.emplace_back("kernel", std::string(u.release) + " " + u.version);
		f.emplace_back("machine", u.machine);
	}
	auto cpu = read_cpu_identity(root);
	f.emplace_back("cpu_vendor", vendor_name(cpu.vendor));
	f.emplace_back("cpu_family", std::to_string(cpu.family));
	f.emplace_back("cpu_model", std::to_string(cpu.model));
	f.emplace_back("hypervisor", cpu.hypervisor ? "yes" : "no");
	f.emplace_back("cpus_online", std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)));
	f.emplace_back("hwsig_version", HWSIG_VERSION);
	f.emplace_back("catalog_version", std::to_string(kCatalogVersion));
	return f;
}

std::vector<DumpPlanEntry> pmu_plan_entries(const std::string &root)
{
	std::vector<DumpPlanEntry> out;
	PmuDevices pmus(root);
	const auto cpu = read_cpu_identity(root);
	const CorePlan core = plan_core_events(pmus, cpu);
	for (const auto &s : core.series) {
		const auto &e = s.event;
		out.push_back({s.series, e.name, pmu_of_type(pmus, e.type), root == "/" ? probe(e) : "planned"});
	}
	for (const auto &[series, why] : core.missing)
		out.push_back({series, "-", "-", "unavailable: " + why});
	const UncoreDramPlan dram = plan_uncore_dram(pmus, cpu);
	if (dram.events.empty()) {
		out.push_back({"imc.*", "-", "-",
			       "unavailable: " + (dram.unavailable_reason.empty() ? std::string("no DRAM counters")
										 : dram.unavailable_reason)});
	} else {
		// One line per (series, PMU instance): the CPUs of an instance are
		// one counter's copies.
		std::map<std::pair<std::string, std::string>, std::pair<std::string, unsigned>> seen;
		for (const auto &e : dram.events) {
			auto &v = seen[{dram_series(e.direction), e.pmu}];
			v.first = e.spec.name;
			v.second++;
		}
		for (const auto &[key, v] : seen)
			out.push_back({key.first, v.first, key.second,
				       "planned (" + dram.kind + ", " + std::to_string(v.second) + " cpu)"});
	}
	return out;
}

void capture_rings(const std::string &root, DumpContents &d, const RingCpuSink &on_cpu)
{
	const std::string dev = join_path(root, "/dev/" HWSIG_DEVICE_NAME);
	KmodInfo info;
	std::optional<KmodClient> client;
	if (root == "/") {
		try {
			client.emplace();
			info = client->get_info();
		} catch (const KmodNotLoaded &) {
			d.rings_absent = "hwsig.ko is not loaded: no ring records";
			return;
		} catch (const Error &e) {
			d.rings_absent = std::string("hwsig.ko: ") + e.what();
			return;
		}
		if (info.ring_records == 0) {
			d.rings_absent = "hwsig.ko is loaded but not configured: no ring records";
			return;
		}
	}
	try {
		// The event names label the records of their own generation only:
		// map, then check the configuration did not change since GET_INFO.
		for (int attempt = 1;; attempt++) {
			auto reader = RingReader::open_device(dev, RingReader::Start::Oldest);
			const RingGeometry g = reader.geometry();
			if (!g.configured) {
				d.rings_absent = "hwsig.ko is loaded but not configured: no ring records";
				return;
			}
			if (client && g.config_generation != info.config_generation) {
				if (attempt == 5)
					throw Error("the configuration kept changing while it was read", EAGAIN);
				info = client->get_info();
				continue;
			}
			DumpRings r;
			r.generation = g.config_generation;
			r.interval_ns = g.sample_interval_ns;
			r.ring_records = g.ring_records;
			r.running = g.running;
			PmuDevices pmus(root);
			for (std::uint32_t i = 0; i < g.nr_events; ++i) {
				DumpRingEvent e;
				if (i < info.events.size()) {
					e.name = info.events[i].name;
					e.pmu = pmu_of_type(pmus, info.events[i].pmu_type);
				} else {
					// No netlink (a fixture root): the mapping has no names.
					e.name = "event" + std::to_string(i);
					e.pmu = "-";
				}
				e.state = "unknown";
				r.events.push_back(std::move(e));
			}
			// Asked before the copy, so that the header can be written
			// before the first ring is (streaming); with sampling stopped
			// the totals are those of the rings exactly.
			if (client) {
				try {
					const KmodStatus st = client->get_status();
					if (st.config_generation == g.config_generation) {
						r.status_written = st.records_written;
						r.status_overwritten = st.records_overwritten;
						auto states = event_states(st, r.events.size());
						for (std::size_t i = 0; i < r.events.size(); ++i)
							r.events[i].state = states[i];
					}
				} catch (const Error &) {
					// The totals are a cross-check; the records stand without them.
				}
			}
			if (on_cpu)
				d.rings = r; // the header the sink's writer needs
			const std::uint32_t gen = static_cast<std::uint32_t>(g.config_generation);
			std::vector<hwsig_record> recs;
			for (unsigned cpu = 0; cpu < g.nr_cpu_ids; ++cpu) {
				// Everything before the oldest slot at the mapping was
				// overwritten before it existed: lost, exactly (the reader
				// starts there and counts what goes while it copies).
				const std::uint64_t before = reader.tail(cpu);
				recs.clear();
				const auto st = reader.read_cpu(cpu, recs);
				DumpRingCpu c;
				c.cpu = cpu;
				c.online = reader.cpu_online(cpu);
				c.lost = before + st.lost;
				for (const auto &rec : recs) {
					if (rec.config_generation != gen) {
						c.other_generation++;
						continue;
					}
					DumpRingRecord t;
					t.seq = rec.seq;
					t.time_ns = rec.time_ns;
					t.flags = rec.flags;
					t.valid_mask = rec.valid_mask;
					for (std::uint32_t i = 0; i < g.nr_events; ++i) {
						t.values.push_back(rec.values[i]);
						t.enabled.push_back(rec.time_enabled[i]);
						t.running.push_back(rec.time_running[i]);
					}
					c.records.push_back(std::move(t));
				}
				c.head = c.lost + c.other_generation + c.records.size();
				// A ring never written to (an offline or excluded CPU) says
				// nothing: left out.
				if (c.head == 0 && !c.online)
					continue;
				if (on_cpu)
					on_cpu(d, std::move(c));
				else
					r.cpus.push_back(std::move(c));
			}
			d.rings = std::move(r);
			return;
		}
	} catch (const Error &e) {
		d.rings_absent = "reading " + dev + ": " + e.what();
	}
}

} // namespace hwsig
