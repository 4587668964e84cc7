// A userspace producer for the rings of <linux/hwsig.h>: the same layout and
// the same store/barrier sequence as hwsig.ko's per-CPU hrtimer, written into
// anonymous memory so that RingReader can be tested (and benchmarked) without
// the module. Payloads are a pure function of (cpu, idx) so that a reader can
// check every record it accepts.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include <linux/hwsig.h>

#include "hwsig/mmap.h"

namespace hwsig::testing {

class RingWriter {
public:
	static constexpr std::size_t kPage = 4096;
	static constexpr std::size_t kWords = sizeof(hwsig_record) / 8;

	RingWriter(unsigned nr_cpus, std::uint32_t ring_records)
	    : nr_cpus_(nr_cpus), ring_records_(ring_records)
	{
		const std::size_t data = std::size_t(ring_records) * sizeof(hwsig_record);
		stride_ = kPage + (data + kPage - 1) / kPage * kPage;
		map_ = Mapping::anonymous(kPage + stride_ * nr_cpus);
		auto *cp = control();
		cp->abi_version = HWSIG_ABI_VERSION;
		cp->compat_version = HWSIG_ABI_COMPAT_VERSION;
		cp->page_size = kPage;
		cp->nr_cpu_ids = nr_cpus;
		cp->mmap_size = map_.size();
		cp->ring_offset = kPage;
		cp->ring_stride = stride_;
		cp->data_offset = kPage;
		cp->ring_records = ring_records;
		cp->record_size = sizeof(hwsig_record);
		cp->nr_events = 3;
		cp->running = 1;
		cp->sample_interval_ns = HWSIG_DEFAULT_INTERVAL_NS;
		cp->config_generation = 1;
		cp->clock_id = 1; // CLOCK_MONOTONIC
		cp->seq = 2;      // published once, not being written
		cp->ring_set = 1;
		for (unsigned c = 0; c < nr_cpus; c++) {
			header(c)->cpu = c;
			header(c)->online = 1;
			header(c)->ring_set = 1;
			header(c)->ring_records = ring_records;
		}
	}

	void *base() const { return map_.data(); }
	std::size_t length() const { return map_.size(); }
	hwsig_control_page *control() const { return static_cast<hwsig_control_page *>(map_.data()); }
	hwsig_ring_header *header(unsigned cpu) const
	{
		return reinterpret_cast<hwsig_ring_header *>(static_cast<unsigned char *>(map_.data()) +
							     kPage + std::size_t(cpu) * stride_);
	}
	std::uint64_t *slot_words(unsigned cpu, std::uint64_t idx) const
	{
		return reinterpret_cast<std::uint64_t *>(reinterpret_cast<unsigned char *>(header(cpu)) + kPage +
							 (idx & (ring_records_ - 1)) * sizeof(hwsig_record));
	}
	std::uint64_t head(unsigned cpu) const { return __atomic_load_n(&header(cpu)->head, __ATOMIC_RELAXED); }

	// The record the module would write as record idx of cpu.
	static hwsig_record expected(unsigned cpu, std::uint64_t idx)
	{
		hwsig_record r{};
		r.seq = idx + 1;
		r.time_ns = 1000000 * (idx + 1) + cpu;
		r.cpu = cpu;
		r.flags = idx == 0 ? HWSIG_RECORD_F_FIRST : 0;
		r.valid_mask = 0x7;
		r.config_generation = 1;
		for (unsigned i = 0; i < HWSIG_MAX_EVENTS; i++) {
			r.values[i] = (idx + 1) * 0x9E3779B97F4A7C15ull + i * 0x100000001ull + cpu;
			r.time_enabled[i] = (idx + 1) * 100000000ull + i;
			r.time_running[i] = (idx + 1) * 50000000ull + i;
		}
		r.seq_end = idx + 1;
		return r;
	}

	// Producer steps, split so that tests can stop half way (a torn record).
	// 1: claim the slot: seq first, then (A).
	void begin(unsigned cpu)
	{
		const std::uint64_t idx = head(cpu);
		__atomic_store_n(&slot_words(cpu, idx)[0], idx + 1, __ATOMIC_RELAXED);
		std::atomic_thread_fence(std::memory_order_release); // (A) pairs with reader's (D)
	}
	// 2: payload words [from, to) of the record (word 0 is seq, kWords-1 seq_end).
	void payload(unsigned cpu, std::size_t from = 1, std::size_t to = kWords - 1)
	{
		payload_of(cpu, expected(cpu, head(cpu)), from, to);
	}
	void payload_of(unsigned cpu, const hwsig_record &r, std::size_t from = 1, std::size_t to = kWords - 1)
	{
		const std::uint64_t idx = head(cpu);
		std::uint64_t words[kWords];
		std::memcpy(words, &r, sizeof(r));
		std::uint64_t *dst = slot_words(cpu, idx);
		for (std::size_t i = from; i < to; i++)
			__atomic_store_n(&dst[i], words[i], __ATOMIC_RELAXED);
	}
	// 3: (B), seq_end, then publish head with (E).
	void finish(unsigned cpu)
	{
		const std::uint64_t idx = head(cpu);
		std::atomic_thread_fence(std::memory_order_release); // (B) pairs with reader's (C)
		__atomic_store_n(&slot_words(cpu, idx)[kWords - 1], idx + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&header(cpu)->head, idx + 1, __ATOMIC_RELEASE); // (E) pairs with (F)
		const std::uint64_t h = idx + 1;
		header(cpu)->overwritten = h > ring_records_ ? h - ring_records_ : 0;
	}
	void write(unsigned cpu)
	{
		begin(cpu);
		payload(cpu);
		finish(cpu);
	}
	// A record of the test's own payload (values, times, valid_mask,
	// generation); seq, seq_end and cpu are the ring's.
	void write(unsigned cpu, hwsig_record r)
	{
		const std::uint64_t idx = head(cpu);
		r.seq = idx + 1;
		r.seq_end = idx + 1;
		r.cpu = cpu;
		begin(cpu);
		payload_of(cpu, r);
		finish(cpu);
	}

private:
	unsigned nr_cpus_;
	std::uint32_t ring_records_;
	std::size_t stride_ = 0;
	Mapping map_;
};

} // namespace hwsig::testing
