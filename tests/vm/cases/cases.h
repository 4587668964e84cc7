#ifndef VMTEST_CASES_H
#define VMTEST_CASES_H

struct vm_case {
	const char *name;
	int (*run)(int argc, char **argv);	/* 0: pass; else vm_fail() said why */
};

int case_version(int argc, char **argv);
int case_software(int argc, char **argv);
int case_hardware(int argc, char **argv);
int case_loss(int argc, char **argv);
int case_badconfig(int argc, char **argv);
int case_unpriv(int argc, char **argv);
int case_rmmod(int argc, char **argv);
int case_cycles(int argc, char **argv);
int case_hotplug(int argc, char **argv);
int case_readers(int argc, char **argv);
int case_reconfig(int argc, char **argv);
int case_onecpu(int argc, char **argv);
int case_bench(int argc, char **argv);
int case_deputy(int argc, char **argv);
int case_ringcap(int argc, char **argv);
int case_mmap(int argc, char **argv);
int case_ctlseq(int argc, char **argv);
int case_ebusy(int argc, char **argv);
int case_bigstatus(int argc, char **argv);
int case_isolated(int argc, char **argv);
int case_fuzz(int argc, char **argv);
int case_hpstorm(int argc, char **argv);
int case_creds(int argc, char **argv);
int case_stopcount(int argc, char **argv);
int case_hybrid(int argc, char **argv);
int case_statusrace(int argc, char **argv);
int case_reconcilecpu(int argc, char **argv);

#endif
