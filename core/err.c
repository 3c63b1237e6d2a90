#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const err_messages[] = {
#define CONV_ERR_MSG(name, msg) msg,
	CONV_ERRORS(CONV_ERR_MSG)
#undef CONV_ERR_MSG
};

const char *conv_strerror(enum conv_err code)
{
	if ((unsigned)code >= (unsigned)CONV_E__COUNT)
		return "unknown error";
	return err_messages[code];
}

enum conv_err conv_fail(struct conv_diag *diag, enum conv_err code, uint64_t offset,
			const char *fmt, ...)
{
	va_list ap;

	if (!diag)
		return code;
	diag->code = code;
	diag->offset = offset;
	va_start(ap, fmt);
	vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
	va_end(ap);
	return code;
}
