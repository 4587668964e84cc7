#include "check.h"

#include <stdarg.h>
#include <string.h>

static char why[1024];

void vm_fail(const char *file, int line, const char *fmt, ...)
{
	if (why[0])
		return;
	const char *base = strrchr(file, '/');
	int n = snprintf(why, sizeof(why), "%s:%d: ", base ? base + 1 : file, line);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why + n, sizeof(why) - (size_t)n, fmt, ap);
	va_end(ap);
	for (char *p = why; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

const char *vm_why(void) { return why; }

void vm_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("    ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}
