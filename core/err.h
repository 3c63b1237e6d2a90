/*
 * One error enum for all of conv, with its messages in one table, plus an
 * optional caller-owned diagnostic that says where a problem was found.
 *
 * Why an X-macro: the enum and the message table are generated from the same
 * list, so a new code cannot lack a message.
 */
#ifndef CONV_CORE_ERR_H
#define CONV_CORE_ERR_H

#include <stdint.h>

#define CONV_ERRORS(X)                                                                 \
	X(OK, "success")                                                               \
	X(NOMEM, "out of memory")                                                      \
	X(IO, "input/output error")                                                    \
	X(FORMAT, "malformed input")                                                   \
	X(TRUNCATED, "input ends early")                                               \
	X(UNSUPPORTED, "unsupported input")                                            \
	X(LIMIT, "a size limit was exceeded")                                          \
	X(NOTFOUND, "not found")                                                       \
	X(LIBELF, "libelf error")                                                      \
	X(LIBDW, "libdw error")                                                        \
	X(NET, "network error")                                                        \
	X(INVAL, "invalid argument")                                                   \
	X(NOTPERF, "not a perf.data file")

enum conv_err {
#define CONV_ERR_ENUM(name, msg) CONV_E_##name,
	CONV_ERRORS(CONV_ERR_ENUM)
#undef CONV_ERR_ENUM
	CONV_E__COUNT
};

/* Returns the fixed message of a code; never NULL. */
const char *conv_strerror(enum conv_err code);

/*
 * Where and why something failed. Owned by the caller; library functions
 * fill it only when they return an error and the pointer is not NULL.
 * offset is a byte offset in the input, UINT64_MAX when it does not apply.
 */
struct conv_diag {
	enum conv_err code;
	uint64_t offset;
	char msg[256];
};

/*
 * Fills diag (if not NULL) with code, offset and a printf-style message and
 * returns code, so that callers write `return conv_fail(d, ...);`.
 */
enum conv_err conv_fail(struct conv_diag *diag, enum conv_err code, uint64_t offset,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
