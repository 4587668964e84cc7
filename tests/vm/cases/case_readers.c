/* Two processes map and read the same rings at once: each sees complete,
 * ordered records, and where both read a record they read the same bytes. */
#include "cases.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define READ_MS 1000
#define INTERVAL_NS 2000000ull

struct seen {
	uint64_t seq, time_ns, clock, ctxsw;
	uint32_t cpu;
};

static int reader(int id, const uint64_t *start, unsigned ncpu)
{
	static struct hw_reader rd;
	static struct hwsig_record buf[1024];
	struct hw_map m;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/reader%d", id);
	FILE *f = fopen(path, "w");
	CHECK(f, "creating %s", path);
	CHECK_OK(hw_map_open(&m), "mapping in the reader");
	memset(&rd, 0, sizeof(rd));
	uint64_t last_seq[VM_MAX_CPUS] = { 0 }, last_t[VM_MAX_CPUS] = { 0 };
	for (unsigned c = 0; c < ncpu; c++)
		rd.tail[c] = start[c];
	uint64_t end = now_ns() + READ_MS * 1000000ull;
	/* Different paces, so the two readers race the producer differently. */
	unsigned pause = id ? 7 : 13;
	while (now_ns() < end) {
		for (unsigned c = 0; c < ncpu; c++) {
			int n = hw_read_cpu(&rd, &m, c, buf, 1024);
			for (int i = 0; i < n; i++) {
				CHECK(buf[i].cpu == c && buf[i].valid_mask == 0x7, "reader %d: cpu %u record cpu %u mask %#x",
				      id, c, buf[i].cpu, buf[i].valid_mask);
				CHECK(buf[i].seq > last_seq[c] && buf[i].time_ns > last_t[c],
				      "reader %d cpu %u: seq %llu time %llu after seq %llu time %llu", id, c,
				      (unsigned long long)buf[i].seq, (unsigned long long)buf[i].time_ns,
				      (unsigned long long)last_seq[c], (unsigned long long)last_t[c]);
				last_seq[c] = buf[i].seq;
				last_t[c] = buf[i].time_ns;
				fprintf(f, "%u %llu %llu %llu %llu\n", c, (unsigned long long)buf[i].seq,
					(unsigned long long)buf[i].time_ns, (unsigned long long)buf[i].values[0],
					(unsigned long long)buf[i].values[2]);
			}
		}
		sleep_ms(pause);
	}
	for (unsigned c = 0; c < ncpu; c++)
		CHECK(rd.lost[c] == 0, "reader %d lost %llu records of cpu %u", id, (unsigned long long)rd.lost[c], c);
	fclose(f);
	hw_map_close(&m);
	return 0;
}

static int load(const char *path, struct seen *out, int max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int n = 0;
	unsigned long long seq, t, clk, sw;
	unsigned cpu;
	while (n < max && fscanf(f, "%u %llu %llu %llu %llu", &cpu, &seq, &t, &clk, &sw) == 5)
		out[n++] = (struct seen){ seq, t, clk, sw, cpu };
	fclose(f);
	return n;
}

int case_readers(int argc, char **argv)
{
	(void)argc; (void)argv;
	struct genl_sock s;
	struct hw_map m;
	if (setup_running(&s, INTERVAL_NS, 1024, hw_sw_events, 3))
		return 1;
	CHECK_OK(hw_map_open(&m), "mapping /dev/hwsig");
	unsigned ncpu = m.ctl->nr_cpu_ids;
	uint64_t start[VM_MAX_CPUS];
	for (unsigned c = 0; c < ncpu; c++)
		start[c] = hw_head(&m, c);
	hw_map_close(&m);
	pid_t pid[2];
	int pipes[2][2];
	for (int i = 0; i < 2; i++) {
		CHECK(!pipe(pipes[i]), "pipe");
		pid[i] = fork();
		if (pid[i] == 0) {
			int rc = reader(i, start, ncpu);
			if (rc)
				(void)!write(pipes[i][1], vm_why(), strlen(vm_why()));
			_exit(rc);
		}
		close(pipes[i][1]);
	}
	for (int i = 0; i < 2; i++) {
		char why[1024] = "";
		ssize_t n = read(pipes[i][0], why, sizeof(why) - 1);
		why[n > 0 ? n : 0] = 0;
		int st = 0;
		waitpid(pid[i], &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "reader %d: %s", i, why[0] ? why : "died");
	}
	static struct seen a[8192], b[8192];
	int na = load("/tmp/reader0", a, 8192), nb = load("/tmp/reader1", b, 8192);
	CHECK(na > 0 && nb > 0, "reader outputs missing (%d, %d)", na, nb);
	/* Both started at the same heads and lost nothing, so each holds the
	 * same prefix of every CPU's stream; compare the common part. */
	int common = 0;
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++) {
			if (a[i].cpu != b[j].cpu || a[i].seq != b[j].seq)
				continue;
			CHECK(a[i].time_ns == b[j].time_ns && a[i].clock == b[j].clock && a[i].ctxsw == b[j].ctxsw,
			      "cpu %u seq %llu differs between the readers", a[i].cpu, (unsigned long long)a[i].seq);
			common++;
			break;
		}
	vm_note("reader 0: %d records, reader 1: %d, %d compared equal", na, nb, common);
	int smaller = na < nb ? na : nb;
	CHECK(common >= smaller - 2 * (int)ncpu * 10, "only %d records common to both readers (%d, %d)", common, na, nb);
	CHECK(common >= (int)(READ_MS * 1000000ull / INTERVAL_NS) / 2, "only %d common records", common);
	genl_close(&s);
	return 0;
}
