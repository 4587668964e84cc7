/* Assertions for the guest cases: a case returns 0 (pass) or 1 (fail)
 * after recording one line saying why. */
#ifndef VMTEST_CHECK_H
#define VMTEST_CHECK_H

#include <stdio.h>

void vm_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The first recorded failure; "" when none. */
const char *vm_why(void);
/* Diagnostic line on the console, indented under the case. */
void vm_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define FAIL(...) do { vm_fail(__FILE__, __LINE__, __VA_ARGS__); return 1; } while (0)
#define CHECK(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)
/* For helpers returning -errno: fail with the error. */
#define CHECK_OK(expr, what) do { int _e = (expr); \
	if (_e) FAIL("%s: %s", what, strerror(-_e)); } while (0)

#endif
