// Umbrella for the PMU event code, one header per job:
//   pmu_format.h   sysfs format/ terms and event strings -> perf_event_attr words
//   cpu_identity.h vendor/family/model from cpuinfo, CPU -> socket
//   pmu_devices.h  the sysfs PMU list (PmuDevices) and name resolution
//   pmu_plan.h     the events behind the metric catalog's cpu.* and
//                  mem.imc_* metrics, and hwsig.ko's event lists
// Documentation/pmu.rst explains the per-vendor choices.
#pragma once

#include "hwsig/cpu_identity.h"
#include "hwsig/pmu_devices.h"
#include "hwsig/pmu_format.h"
#include "hwsig/pmu_plan.h"
