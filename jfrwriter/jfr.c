/*
 * JFR 2.0 writer.
 *
 * File = chunks back to back. Chunk layout (all offsets from the chunk start):
 *   0  "FLR\0" | 4 major u16 = 2 | 6 minor u16 = 0 | 8 chunk size u64
 *   16 offset of the checkpoint u64 | 24 offset of the metadata u64
 *   32 start, ns since the epoch u64 | 40 duration ns u64 | 48 start ticks u64
 *   56 ticks per second u64 | 64 state u8 = 0 | 65 pad u8 | 66 flags u16
 *      (bit 0: integers are varints; bit 1: last chunk)     (big-endian, 68 bytes)
 *   68 events... | checkpoint | metadata
 * Record = size varint (counting itself) | type id varint | payload.
 * Integers are unsigned LEB128 varints, 32-bit fields written as unsigned
 * 32-bit values; strings are 0 (null) or 3 (UTF-8) + length + bytes.
 * Checkpoint payload: start | duration | delta 0 | type byte 1 | pool count |
 * pools (type id | count | (key | fields)...). Metadata payload: start |
 * duration | metadata id | string table | element tree (root: metadata with
 * the classes, region).
 *
 * Ticks are the perf sample clock in ns; chunk start nanos are wall clock
 * (CLOCK_DATA, else the file's time) and unique per chunk (JMC drops a chunk
 * whose start equals an earlier one). Constant pool keys are global to the
 * file: each chunk carries the entries its events use, with the same keys;
 * a thread's key is its OS thread id. Event types have JDK 17's fields in
 * JDK 17's order (readers that know a type may read it positionally).
 */
#include "jfrwriter/jfr.h"

#include "core/jfrenc.h"

#include "core/dbuf.h"
#include "core/io.h"
#include "core/hidx.h"
#include "core/hmap.h"
#include "core/strtab.h"
#include "core/vec.h"
#include "model/events.h"
#include "model/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* type ids (async-profiler's scheme: primitives 4-11, types 20+, events 100+, annotations 200+) */
enum {
	T_BOOLEAN = 4, T_CHAR, T_FLOAT, T_DOUBLE, T_BYTE, T_SHORT, T_INT, T_LONG,
	T_STRING = 20, T_THREAD, T_STACKTRACE, T_STACKFRAME, T_METHOD, T_CLASS, T_CLASSLOADER,
	T_PACKAGE, T_SYMBOL, T_FRAMETYPE, T_THREADSTATE,
	E_EXECUTION_SAMPLE = 100, E_ACTIVE_SETTING, E_OS_INFO, E_CPU_INFO, E_NATIVE_LIBRARY,
	E_LOST_SAMPLES,
	A_LABEL = 200, A_DESCRIPTION, A_CATEGORY, A_TIMESTAMP, A_TIMESPAN, A_UNSIGNED,
	A_MEMORY_ADDRESS,
	/* one per other perf event, above every fixed id: files may have thousands of events */
	E_PERF_FIRST = 1000
};

enum frame_type {
	FT_INTERPRETED, FT_JIT, FT_INLINED, FT_NATIVE, FT_CPP, FT_KERNEL, FT_C1, FT__COUNT
};

static const char *const frame_type_names[FT__COUNT] = {
	"Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel", "C1 compiled"
};

/* ---- encoding ---- */

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80 && n < 9) {
		v >>= 7;
		n++;
	}
	return n;
}

/* The length of a record's size field: the exact varint of inner plus itself. */
static size_t size_field_len(size_t inner)
{
	size_t s = 1;

	while (varint_len(inner + s) != s)
		s++;
	return s;
}

/* 32-bit fields: the unsigned 32-bit value, never sign-extended (readers use 32-bit decoders) */
static void put_u32(struct dbuf *b, int64_t v)
{
	jfr_put_varint(b, (uint32_t)v);
}

/* A record whose body is in body: size (exact varint) | type | body. */
static void put_record(struct dbuf *out, uint64_t type, const struct dbuf *body)
{
	size_t inner = varint_len(type) + body->len, s = size_field_len(inner);

	jfr_put_varint(out, inner + s);
	jfr_put_varint(out, type);
	dbuf_append(out, body->data, body->len);
}

/* ---- metadata ---- */

struct fdef {
	const char *name;
	uint32_t type;
	bool cp, array;
	const char *label;
	uint32_t ann;        /* extra annotation (Timestamp, Timespan, Unsigned...) or 0 */
	const char *ann_val; /* its value, NULL for marker annotations */
	uint32_t ann2;       /* a second marker annotation or 0 */
};

struct cdef {
	uint32_t id;
	const char *name, *super;
	bool simple;
	const char *label, *desc;
	const char *cat[3];
	const struct fdef *fields;
	size_t nfields;
};

#define NF(a) (sizeof(a) / sizeof((a)[0]))
#define ANNOTATION "java.lang.annotation.Annotation"
#define EVENT "jdk.jfr.Event"

static const struct fdef f_string_value[] = {{"value", T_STRING, false, false, NULL, 0, NULL, 0}};
static const struct fdef f_category_value[] = {{"value", T_STRING, false, true, NULL, 0, NULL, 0}};
static const struct fdef f_thread[] = {
	{"osName", T_STRING, false, false, "OS Thread Name", 0, NULL, 0},
	{"osThreadId", T_LONG, false, false, "OS Thread Id", 0, NULL, 0},
	{"javaName", T_STRING, false, false, "Java Thread Name", 0, NULL, 0},
	{"javaThreadId", T_LONG, false, false, "Java Thread Id", 0, NULL, 0},
};
static const struct fdef f_stacktrace[] = {
	{"truncated", T_BOOLEAN, false, false, "Truncated", 0, NULL, 0},
	{"frames", T_STACKFRAME, false, true, "Stack Frames", 0, NULL, 0},
};
static const struct fdef f_stackframe[] = {
	{"method", T_METHOD, true, false, "Java Method", 0, NULL, 0},
	{"lineNumber", T_INT, false, false, "Line Number", 0, NULL, 0},
	{"bytecodeIndex", T_INT, false, false, "Bytecode Index", 0, NULL, 0},
	{"type", T_FRAMETYPE, true, false, "Frame Type", 0, NULL, 0},
};
static const struct fdef f_method[] = {
	{"type", T_CLASS, true, false, "Type", 0, NULL, 0},
	{"name", T_SYMBOL, true, false, "Name", 0, NULL, 0},
	{"descriptor", T_SYMBOL, true, false, "Descriptor", 0, NULL, 0},
	{"modifiers", T_INT, false, false, "Modifiers", 0, NULL, 0},
	{"hidden", T_BOOLEAN, false, false, "Hidden", 0, NULL, 0},
};
static const struct fdef f_class[] = {
	{"classLoader", T_CLASSLOADER, true, false, "Class Loader", 0, NULL, 0},
	{"name", T_SYMBOL, true, false, "Name", 0, NULL, 0},
	{"package", T_PACKAGE, true, false, "Package", 0, NULL, 0},
	{"modifiers", T_INT, false, false, "Access Modifiers", 0, NULL, 0},
	{"hidden", T_BOOLEAN, false, false, "Hidden", 0, NULL, 0},
};
static const struct fdef f_classloader[] = {
	{"type", T_CLASS, true, false, "Type", 0, NULL, 0},
	{"name", T_SYMBOL, true, false, "Name", 0, NULL, 0},
};
static const struct fdef f_package[] = {{"name", T_SYMBOL, true, false, "Name", 0, NULL, 0}};
static const struct fdef f_symbol[] = {{"string", T_STRING, false, false, "String", 0, NULL, 0}};
static const struct fdef f_frametype[] = {
	{"description", T_STRING, false, false, "Description", 0, NULL, 0}};
static const struct fdef f_threadstate[] = {{"name", T_STRING, false, false, "Name", 0, NULL, 0}};

#define START_TIME {"startTime", T_LONG, false, false, "Start Time", A_TIMESTAMP, "TICKS", 0}
static const struct fdef f_execution_sample[] = {
	START_TIME,
	{"sampledThread", T_THREAD, true, false, "Thread", 0, NULL, 0},
	{"stackTrace", T_STACKTRACE, true, false, "Stack Trace", 0, NULL, 0},
	{"state", T_THREADSTATE, true, false, "Thread State", 0, NULL, 0},
};
/*
 * The JDK 17 layout, duration, eventThread and stackTrace included: readers
 * that know this type read it field by field in this order whatever the
 * metadata says (async-profiler's converter up to 2.10 read the JDK 22+
 * layout's id as the duration, went out of step and failed with "Invalid
 * string encoding"), and newer ones find id, name and value by name.
 */
static const struct fdef f_active_setting[] = {
	START_TIME,
	{"duration", T_LONG, false, false, "Duration", A_TIMESPAN, "TICKS", 0},
	{"eventThread", T_THREAD, true, false, "Event Thread", 0, NULL, 0},
	{"stackTrace", T_STACKTRACE, true, false, "Stack Trace", 0, NULL, 0},
	{"id", T_LONG, false, false, "Event Id", 0, NULL, 0},
	{"name", T_STRING, false, false, "Setting Name", 0, NULL, 0},
	{"value", T_STRING, false, false, "Setting Value", 0, NULL, 0},
};
static const struct fdef f_os_info[] = {
	START_TIME, {"osVersion", T_STRING, false, false, "OS Version", 0, NULL, 0}};
/* JDK 17's fields, so that hwThreads is where readers of that layout look for it */
static const struct fdef f_cpu_info[] = {
	START_TIME,
	{"cpu", T_STRING, false, false, "Type", 0, NULL, 0},
	{"description", T_STRING, false, false, "Description", 0, NULL, 0},
	{"sockets", T_INT, false, false, "Sockets", A_UNSIGNED, NULL, 0},
	{"cores", T_INT, false, false, "Cores", A_UNSIGNED, NULL, 0},
	{"hwThreads", T_INT, false, false, "Hardware Threads", A_UNSIGNED, NULL, 0},
};
/* JDK 17's four fields, then Datadog's two: readers of JDK 17's layout stop before them */
static const struct fdef f_native_library[] = {
	START_TIME,
	{"name", T_STRING, false, false, "Name", 0, NULL, 0},
	{"baseAddress", T_LONG, false, false, "Base Address", A_UNSIGNED, NULL, A_MEMORY_ADDRESS},
	{"topAddress", T_LONG, false, false, "Top Address", A_UNSIGNED, NULL, A_MEMORY_ADDRESS},
	{"buildId", T_STRING, false, false, "GNU Build ID", 0, NULL, 0},
	{"loadBias", T_LONG, false, false, "Load Bias", A_UNSIGNED, NULL, A_MEMORY_ADDRESS},
};
static const struct fdef f_lost_samples[] = {
	START_TIME,
	{"lostSamples", T_LONG, false, false, "Lost Samples", 0, NULL, 0},
};
static const struct fdef f_perf_event[] = {
	START_TIME,
	{"eventThread", T_THREAD, true, false, "Thread", 0, NULL, 0},
	{"stackTrace", T_STACKTRACE, true, false, "Stack Trace", 0, NULL, 0},
	{"period", T_LONG, false, false, "Period", 0, NULL, 0},
	{"weight", T_LONG, false, false, "Weight", 0, NULL, 0},
	{"cpu", T_INT, false, false, "CPU", 0, NULL, 0},
};
static const struct fdef f_perf_clock_event[] = {
	START_TIME,
	{"eventThread", T_THREAD, true, false, "Thread", 0, NULL, 0},
	{"stackTrace", T_STACKTRACE, true, false, "Stack Trace", 0, NULL, 0},
	{"period", T_LONG, false, false, "Period", A_TIMESPAN, "NANOSECONDS", 0},
	{"weight", T_LONG, false, false, "Weight", 0, NULL, 0},
	{"cpu", T_INT, false, false, "CPU", 0, NULL, 0},
};

static const struct fdef f_offcpu[] = {
	START_TIME,
	{"duration", T_LONG, false, false, "Duration", A_TIMESPAN, "TICKS", 0},
	{"eventThread", T_THREAD, true, false, "Thread", 0, NULL, 0},
	{"stackTrace", T_STACKTRACE, true, false, "Stack Trace", 0, NULL, 0},
	{"state", T_STRING, false, false, "State", 0, NULL, 0},
};

static const struct cdef static_classes[] = {
	{T_BOOLEAN, "boolean", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{T_CHAR, "char", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{T_FLOAT, "float", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{T_DOUBLE, "double", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{T_BYTE, "byte", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{T_SHORT, "short", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{T_INT, "int", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{T_LONG, "long", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{T_STRING, "java.lang.String", NULL, false, NULL, NULL, {NULL}, NULL, 0},
	{A_LABEL, "jdk.jfr.Label", ANNOTATION, false, NULL, NULL, {NULL}, f_string_value, 1},
	{A_DESCRIPTION, "jdk.jfr.Description", ANNOTATION, false, NULL, NULL, {NULL}, f_string_value, 1},
	{A_CATEGORY, "jdk.jfr.Category", ANNOTATION, false, NULL, NULL, {NULL}, f_category_value, 1},
	{A_TIMESTAMP, "jdk.jfr.Timestamp", ANNOTATION, false, NULL, NULL, {NULL}, f_string_value, 1},
	{A_TIMESPAN, "jdk.jfr.Timespan", ANNOTATION, false, NULL, NULL, {NULL}, f_string_value, 1},
	{A_UNSIGNED, "jdk.jfr.Unsigned", ANNOTATION, false, NULL, NULL, {NULL}, NULL, 0},
	{A_MEMORY_ADDRESS, "jdk.jfr.MemoryAddress", ANNOTATION, false, NULL, NULL, {NULL}, NULL, 0},
	{T_THREAD, "java.lang.Thread", NULL, false, "Thread", NULL, {NULL}, f_thread, NF(f_thread)},
	{T_STACKTRACE, "jdk.types.StackTrace", NULL, false, "Stacktrace", NULL, {NULL}, f_stacktrace,
	 NF(f_stacktrace)},
	{T_STACKFRAME, "jdk.types.StackFrame", NULL, false, NULL, NULL, {NULL}, f_stackframe,
	 NF(f_stackframe)},
	{T_METHOD, "jdk.types.Method", NULL, false, "Java Method", NULL, {NULL}, f_method,
	 NF(f_method)},
	{T_CLASS, "java.lang.Class", NULL, false, "Java Class", NULL, {NULL}, f_class, NF(f_class)},
	{T_CLASSLOADER, "jdk.types.ClassLoader", NULL, false, "Java Class Loader", NULL, {NULL},
	 f_classloader, NF(f_classloader)},
	{T_PACKAGE, "jdk.types.Package", NULL, false, "Package", NULL, {NULL}, f_package,
	 NF(f_package)},
	{T_SYMBOL, "jdk.types.Symbol", NULL, true, "Symbol", NULL, {NULL}, f_symbol, NF(f_symbol)},
	{T_FRAMETYPE, "jdk.types.FrameType", NULL, true, "Frame type", NULL, {NULL}, f_frametype,
	 NF(f_frametype)},
	{T_THREADSTATE, "jdk.types.ThreadState", NULL, true, "Java Thread State", NULL, {NULL},
	 f_threadstate, NF(f_threadstate)},
	{E_EXECUTION_SAMPLE, "jdk.ExecutionSample", EVENT, false, "Method Profiling Sample",
	 "Snapshot of a thread's call stack (perf samples of the CPU-time event)",
	 {"Java Virtual Machine", "Profiling", NULL}, f_execution_sample, NF(f_execution_sample)},
	{E_ACTIVE_SETTING, "jdk.ActiveSetting", EVENT, false, "Recording Setting", NULL,
	 {"Flight Recorder", NULL, NULL}, f_active_setting, NF(f_active_setting)},
	{E_OS_INFO, "jdk.OSInformation", EVENT, false, "OS Information", NULL,
	 {"Operating System", NULL, NULL}, f_os_info, NF(f_os_info)},
	{E_CPU_INFO, "jdk.CPUInformation", EVENT, false, "CPU Information", NULL,
	 {"Operating System", "Processor", NULL}, f_cpu_info, NF(f_cpu_info)},
	{E_NATIVE_LIBRARY, "jdk.NativeLibrary", EVENT, false, "Native Library",
	 "A mapped object file with samples, its GNU build-id and load bias (runtime address - ELF "
	 "address), to symbolize <remote> frames later",
	 {"Java Virtual Machine", "Runtime", NULL}, f_native_library, NF(f_native_library)},
	{E_LOST_SAMPLES, "perf.LostSamples", EVENT, false, "Lost Samples",
	 "Samples the kernel dropped (perf LOST and LOST_SAMPLES records)", {"Linux perf", NULL, NULL},
	 f_lost_samples, NF(f_lost_samples)},
};

struct mb {
	struct strtab strs;
	struct dbuf el; /* element bytes; string indexes refer to strs */
};

static uint32_t ms(struct mb *m, const char *s)
{
	uint32_t id = strtab_intern_cstr(&m->strs, s);

	return id == STRTAB_NONE ? 0 : id;
}

static void el_head(struct mb *m, const char *name, size_t nattr)
{
	jfr_put_varint(&m->el, ms(m, name));
	jfr_put_varint(&m->el, nattr);
}

static void el_attr(struct mb *m, const char *k, const char *v)
{
	jfr_put_varint(&m->el, ms(m, k));
	jfr_put_varint(&m->el, ms(m, v));
}

static void el_attr_u(struct mb *m, const char *k, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	el_attr(m, k, buf);
}

static void el_annotation(struct mb *m, uint32_t cls, const char *value)
{
	el_head(m, "annotation", value ? 2 : 1);
	el_attr_u(m, "class", cls);
	if (value)
		el_attr(m, "value", value);
	jfr_put_varint(&m->el, 0);
}

static void el_class(struct mb *m, const struct cdef *c)
{
	size_t ncat = 0, nchild;

	while (ncat < 3 && c->cat[ncat])
		ncat++;
	nchild = c->nfields + (c->label != NULL) + (c->desc != NULL) + (ncat > 0);
	el_head(m, "class", 2 + (c->super != NULL) + c->simple);
	el_attr_u(m, "id", c->id);
	el_attr(m, "name", c->name);
	if (c->super)
		el_attr(m, "superType", c->super);
	if (c->simple)
		el_attr(m, "simpleType", "true");
	jfr_put_varint(&m->el, nchild);
	for (size_t i = 0; i < c->nfields; i++) {
		const struct fdef *f = &c->fields[i];

		el_head(m, "field", 2 + f->cp + f->array);
		el_attr(m, "name", f->name);
		el_attr_u(m, "class", f->type);
		if (f->cp)
			el_attr(m, "constantPool", "true");
		if (f->array)
			el_attr(m, "dimension", "1");
		jfr_put_varint(&m->el, (f->label != NULL) + (f->ann != 0) + (f->ann2 != 0));
		if (f->label)
			el_annotation(m, A_LABEL, f->label);
		if (f->ann)
			el_annotation(m, f->ann, f->ann_val);
		if (f->ann2)
			el_annotation(m, f->ann2, NULL);
	}
	if (c->label)
		el_annotation(m, A_LABEL, c->label);
	if (c->desc)
		el_annotation(m, A_DESCRIPTION, c->desc);
	if (ncat) {
		el_head(m, "annotation", 1 + ncat);
		el_attr_u(m, "class", A_CATEGORY);
		for (size_t i = 0; i < ncat; i++) {
			char k[16];

			snprintf(k, sizeof(k), "value-%zu", i);
			el_attr(m, k, c->cat[i]);
		}
		jfr_put_varint(&m->el, 0);
	}
}

/* ---- frames: what each model location becomes ---- */

struct jframe {
	uint32_t method; /* key */
	int32_t line;
	uint8_t type;
};

struct jmethod {
	uint32_t cls, name, desc; /* class key, symbol keys */
	int32_t modifiers;
};

struct jclass {
	uint32_t name, package; /* symbol key, package key (0 = none) */
};

struct fn_memo {
	uint32_t cls, method; /* method 0: none yet */
	uint8_t kind;         /* FM_NATIVE or FM_KERNEL: the descriptor it was made with */
};

enum { FM_NATIVE = 1, FM_KERNEL = 2 };

struct w {
	const struct prof *p;
	struct strtab syms; /* symbol key = id + 1 */
	struct jmethod *methods;
	size_t nr_methods, cap_methods;
	struct hidx method_idx; /* the methods, by (class, name, descriptor) */
	struct jclass *classes;
	size_t nr_classes, cap_classes;
	struct hmap class_idx;
	uint32_t *packages; /* package key - 1 -> symbol key */
	size_t nr_packages, cap_packages;
	struct hmap package_idx;
	struct jframe *frames; /* frames of every location, consecutive */
	size_t nr_frames, cap_frames;
	uint32_t *loc_first, *loc_count; /* per location */
	/*
	 * The method last made for each model function, and the class of each
	 * mapping's library: most locations repeat a function already seen,
	 * and interning its name again (hash and compare) was most of the
	 * writer's time.
	 */
	struct fn_memo *fn_memo; /* per model function */
	uint32_t *map_class;     /* per model mapping: class id + 1, 0 = not yet */
	/*
	 * The same for frames without lines (all of them with -n): the class of
	 * each mapping's build-id, and the symbols every such frame repeats,
	 * each interned at its first use (as before, so ids keep their order).
	 * Interning them per frame (hash, compare, strlen) was 60 % of the
	 * tables' time with -n.
	 */
	uint32_t *map_bid_class; /* per model mapping: class id + 1, 0 = not yet */
	uint32_t cls_none;       /* class "", 0 = not yet */
	uint32_t sym_remote, sym_desc_native, sym_desc_kernel; /* 0 = not yet */
	/*
	 * Per model thread, the model thread whose pool entry stands for its OS
	 * thread id, and that entry's key: thread keys are tids (see
	 * thread_keys), and the model has a thread per (process generation,
	 * tid), so an exec or a reused tid gives two with one tid.
	 */
	uint32_t *thread_rep, *thread_key;
	/* per chunk: what its events use (used_thread: representatives only) */
	uint8_t *used_stack, *used_thread, *used_method, *used_class, *used_sym, *used_pkg,
		*used_map;
	uint64_t remote_frames;
	bool nomem;
	struct io_out o;
	struct dbuf body; /* an event's body where a field has no size bound (a string) */
};

static uint32_t sym(struct w *w, const char *s)
{
	uint32_t id = strtab_intern_cstr(&w->syms, s ? s : "");

	if (id == STRTAB_NONE) {
		w->nomem = true;
		return 0;
	}
	return id + 1;
}

static uint32_t package_of(struct w *w, const char *internal_class)
{
	const char *slash = strrchr(internal_class, '/');
	char buf[1024];
	uint32_t s;
	uint64_t h, *v;

	if (!slash || (size_t)(slash - internal_class) >= sizeof(buf))
		return 0;
	snprintf(buf, sizeof(buf), "%.*s", (int)(slash - internal_class), internal_class);
	s = sym(w, buf);
	h = hmap_mix(3, s);
	for (v = hmap_get(&w->package_idx, h); v; v = hmap_get(&w->package_idx, ++h))
		if (w->packages[*v] == s)
			return (uint32_t)*v + 1;
	if (!vec_reserve((void **)&w->packages, &w->cap_packages, w->nr_packages + 1, sizeof(uint32_t))) {
		w->nomem = true;
		return 0;
	}
	w->packages[w->nr_packages] = s;
	hmap_put(&w->package_idx, h, w->nr_packages);
	return (uint32_t)++w->nr_packages;
}

static uint32_t class_of(struct w *w, const char *name, bool java)
{
	uint32_t s = sym(w, name);
	uint64_t h = hmap_mix(5, s), *v;

	for (v = hmap_get(&w->class_idx, h); v; v = hmap_get(&w->class_idx, ++h))
		if (w->classes[*v].name == s)
			return (uint32_t)*v + 1;
	if (!vec_reserve((void **)&w->classes, &w->cap_classes, w->nr_classes + 1,
			 sizeof(*w->classes))) {
		w->nomem = true;
		return 0;
	}
	w->classes[w->nr_classes].name = s;
	w->classes[w->nr_classes].package = java ? package_of(w, name) : 0;
	hmap_put(&w->class_idx, h, w->nr_classes);
	return (uint32_t)++w->nr_classes;
}

/* A symbol interned once into *memo (0 until then). */
static uint32_t sym_memo(struct w *w, uint32_t *memo, const char *s)
{
	if (!*memo)
		*memo = sym(w, s);
	return *memo;
}

/* The method (cls, symbol n, symbol d), made when new. */
static uint32_t method_of_syms(struct w *w, uint32_t cls, uint32_t n, uint32_t d,
			       int32_t modifiers)
{
	uint64_t h = hmap_mix(hmap_mix(hmap_mix(7, cls), n), d);
	struct hidx_iter it;

	for (uint32_t v = hidx_first(&w->method_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&w->method_idx, &it)) {
		const struct jmethod *m = &w->methods[v];

		if (m->cls == cls && m->name == n && m->desc == d)
			return v + 1;
	}
	if (w->nr_methods >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&w->methods, &w->cap_methods, w->nr_methods + 1,
			 sizeof(*w->methods))) {
		w->nomem = true;
		return 0;
	}
	w->methods[w->nr_methods].cls = cls;
	w->methods[w->nr_methods].name = n;
	w->methods[w->nr_methods].desc = d;
	w->methods[w->nr_methods].modifiers = modifiers;
	if (!hidx_add(&w->method_idx, h, (uint32_t)w->nr_methods)) {
		w->nomem = true;
		return 0;
	}
	return (uint32_t)++w->nr_methods;
}

static uint32_t method_of(struct w *w, uint32_t cls, const char *name, const char *desc,
			  int32_t modifiers)
{
	uint32_t n = sym(w, name);

	return method_of_syms(w, cls, n, sym(w, desc), modifiers);
}

/* The class "" (kernel and unmapped frames). */
static uint32_t class_none(struct w *w)
{
	if (!w->cls_none)
		w->cls_none = class_of(w, "", false);
	return w->cls_none;
}

/* The class of a mapping's name (memo: map_class) or build-id (map_bid_class). */
static uint32_t class_of_mapping(struct w *w, uint32_t *memo, uint32_t mapping, const char *name)
{
	if (!memo || mapping == PROF_NONE)
		return class_of(w, name, false);
	if (!memo[mapping])
		memo[mapping] = class_of(w, name, false) + 1;
	return memo[mapping] - 1;
}

static void add_frame(struct w *w, uint32_t method, int64_t line, enum frame_type t)
{
	struct jframe *f;

	if (!vec_reserve((void **)&w->frames, &w->cap_frames, w->nr_frames + 1, sizeof(*f))) {
		w->nomem = true;
		return;
	}
	f = &w->frames[w->nr_frames++];
	f->method = method;
	f->line = line > 0 && line <= INT32_MAX ? (int32_t)line : 0;
	f->type = (uint8_t)t;
}

/* A Java type name ("int", "java.lang.String[]") -> descriptor; false if not one. */
static bool java_type_desc(const char *t, size_t n, struct dbuf *d)
{
	static const struct {
		const char *name;
		char code;
	} prim[] = {{"int", 'I'}, {"long", 'J'}, {"boolean", 'Z'}, {"byte", 'B'}, {"char", 'C'},
		    {"short", 'S'}, {"float", 'F'}, {"double", 'D'}, {"void", 'V'}};

	while (n && t[0] == ' ') {
		t++;
		n--;
	}
	while (n && t[n - 1] == ' ')
		n--;
	while (n >= 2 && t[n - 2] == '[' && t[n - 1] == ']') {
		dbuf_putc(d, '[');
		n -= 2;
	}
	if (!n)
		return false;
	for (size_t i = 0; i < NF(prim); i++) {
		if (strlen(prim[i].name) == n && !memcmp(prim[i].name, t, n)) {
			dbuf_putc(d, prim[i].code);
			return true;
		}
	}
	dbuf_putc(d, 'L');
	for (size_t i = 0; i < n; i++) {
		char c = t[i];

		if (c == ' ' || c == '(' || c == ')' || c == ';' || c == ',')
			return false;
		dbuf_putc(d, c == '.' ? '/' : c);
	}
	dbuf_putc(d, ';');
	return true;
}

/*
 * A JIT map name as a Java method. HotSpot's perf map writes
 * "<return type> <pkg.Class>.<method>(<parameter types>)"; perf-map-agent
 * and jitdump agents write "L<pkg/Class>;::<method>[(descriptor)]".
 */
static bool java_method(const char *name, struct dbuf *cls, struct dbuf *meth, struct dbuf *desc)
{
	const char *sp, *open, *close, *dot, *colons;

	if (name[0] == 'L' && (colons = strstr(name, ";::")) != NULL && colons > name + 1) {
		const char *m = colons + 3, *paren = strchr(m, '(');
		size_t mlen = paren ? (size_t)(paren - m) : strlen(m);

		if (!mlen)
			return false;
		dbuf_append(cls, name + 1, (size_t)(colons - name - 1));
		dbuf_append(meth, m, mlen);
		if (paren && strchr(paren, ')'))
			dbuf_puts(desc, paren);
		else
			dbuf_puts(desc, JFR_DESC_NATIVE);
		return true;
	}
	sp = strchr(name, ' ');
	open = strchr(name, '(');
	close = open ? strchr(open, ')') : NULL;
	if (!sp || !open || !close || sp > open || close[1] != '\0')
		return false;
	/* the qualified method name: between the space and '(' */
	for (dot = open; dot > sp && *dot != '.'; dot--)
		;
	if (dot <= sp + 1 || dot + 1 == open)
		return false;
	for (const char *q = sp + 1; q < dot; q++) {
		if (*q == ' ')
			return false;
		dbuf_putc(cls, *q == '.' ? '/' : *q);
	}
	dbuf_append(meth, dot + 1, (size_t)(open - dot - 1));
	dbuf_putc(desc, '(');
	for (const char *a = open + 1; a < close;) {
		const char *comma = memchr(a, ',', (size_t)(close - a));
		const char *end = comma ? comma : close;

		if (!java_type_desc(a, (size_t)(end - a), desc))
			return false;
		a = comma ? comma + 1 : close;
	}
	dbuf_putc(desc, ')');
	return java_type_desc(name, (size_t)(sp - name), desc);
}

/*
 * Writes open, "0x", v in lowercase hex and close (NUL-terminated) at p, as
 * snprintf's "%s0x%" PRIx64 "%s" would: the name of a frame without a symbol.
 * snprintf was most of the method tables' time without symbols (-n).
 */
static void hex_name(char *p, const char *open, uint64_t v, const char *close)
{
	char tmp[16];
	int n = 0;

	while (*open)
		*p++ = *open++;
	*p++ = '0';
	*p++ = 'x';
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	while (*close)
		*p++ = *close++;
	*p = 0;
}

const char *jfr_native_class(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static enum frame_type native_type(bool kernel, bool demangled)
{
	return kernel ? FT_KERNEL : demangled ? FT_CPP : FT_NATIVE;
}

const char *jfr_native_frame_type(bool kernel, bool demangled)
{
	return frame_type_names[native_type(kernel, demangled)];
}

/* The native method of model function fn in class cls, made once per (function, class). */
static uint32_t memo_method(struct w *w, uint32_t fn, uint32_t cls, uint8_t kind)
{
	const struct prof_function *f = &w->p->functions[fn];
	struct fn_memo *m = w->fn_memo ? &w->fn_memo[fn] : NULL;
	uint32_t n, id;

	if (m && m->method && m->cls == cls && m->kind == kind)
		return m->method;
	n = sym(w, strtab_get(&w->p->strs, f->name));
	id = method_of_syms(w, cls, n,
			    kind == FM_KERNEL ? sym_memo(w, &w->sym_desc_kernel, JFR_DESC_KERNEL)
					      : sym_memo(w, &w->sym_desc_native, JFR_DESC_NATIVE),
			    JFR_ACC_NATIVE);
	if (m) {
		m->cls = cls;
		m->method = id;
		m->kind = kind;
	}
	return id;
}

static void location_frames(struct w *w, uint32_t loc)
{
	const struct prof *p = w->p;
	const struct prof_location *l = &p->locations[loc];
	const struct prof_mapping *m = l->mapping == PROF_NONE ? NULL : &p->mappings[l->mapping];
	enum prof_map_kind kind = m ? m->kind : PROF_MAP_OTHER;
	const char *lib = m ? jfr_native_class(strtab_get(&p->strs, m->filename)) : "";
	char buf[64];

	w->loc_first[loc] = (uint32_t)w->nr_frames;
	if (!l->nr_lines) {
		const char *bid = m ? strtab_get(&p->strs, m->build_id) : "";
		enum frame_type t = FT_NATIVE;
		uint32_t cls, n, d; /* in this order: the symbols' ids follow their first use */

		if (kind == PROF_MAP_KERNEL) {
			hex_name(buf, "", l->address, "");
			cls = class_none(w);
			n = sym(w, buf);
			d = sym_memo(w, &w->sym_desc_kernel, JFR_DESC_KERNEL);
			t = FT_KERNEL;
		} else if (bid[0] && l->has_elf_addr) {
			/*
			 * remote symbolication: build-id + ELF address, resolvable later; the
			 * address as a parameter type, so that jfr print and JMC, which parse
			 * descriptors, show "<remote>(0x...)" ("(0x...)" was unparsable to them)
			 */
			hex_name(buf, "(L", l->elf_addr, ";)L;");
			cls = class_of_mapping(w, w->map_bid_class, l->mapping, bid);
			n = sym_memo(w, &w->sym_remote, "<remote>");
			d = sym(w, buf);
			w->remote_frames++;
		} else {
			hex_name(buf, "", l->address, "");
			cls = class_of_mapping(w, w->map_class, l->mapping, lib);
			n = sym(w, buf);
			d = sym_memo(w, &w->sym_desc_native, JFR_DESC_NATIVE);
		}
		add_frame(w, method_of_syms(w, cls, n, d, JFR_ACC_NATIVE), 0, t);
	}
	for (uint32_t i = 0; i < l->nr_lines; i++) {
		const struct prof_line *ln = &p->lines[l->first_line + i];
		const struct prof_function *f = &p->functions[ln->function];
		const char *name = strtab_get(&p->strs, f->name);

		if (kind == PROF_MAP_KERNEL) {
			add_frame(w, memo_method(w, ln->function, class_none(w), FM_KERNEL), ln->line,
				  FT_KERNEL);
		} else if (kind == PROF_MAP_JIT) {
			struct dbuf c, mt, d;
			bool java;

			dbuf_init(&c, 4096);
			dbuf_init(&mt, 4096);
			dbuf_init(&d, 4096);
			java = java_method(name, &c, &mt, &d) && dbuf_putc(&c, 0) && dbuf_putc(&mt, 0) &&
			       dbuf_putc(&d, 0);
			if (java)
				add_frame(w, method_of(w, class_of(w, (char *)c.data, true),
						       (char *)mt.data, (char *)d.data, 0),
					  ln->line, FT_JIT);
			else
				add_frame(w, method_of(w, class_none(w), name, JFR_DESC_NATIVE, JFR_ACC_NATIVE),
					  ln->line, FT_NATIVE);
			dbuf_release(&c);
			dbuf_release(&mt);
			dbuf_release(&d);
		} else {
			/*
			 * a demangled name (differs from the linkage name) is C++ or Rust,
			 * and so is a name without a system name: the symbolizer leaves it
			 * out for C++ functions whose DWARF has no linkage name
			 */
			enum frame_type t = native_type(false, f->system_name != f->name);
			uint32_t cls = class_of_mapping(w, w->map_class, l->mapping, lib);

			add_frame(w, memo_method(w, ln->function, cls, FM_NATIVE), ln->line, t);
		}
	}
	w->loc_count[loc] = (uint32_t)(w->nr_frames - w->loc_first[loc]);
}

/* ---- output ---- */

struct chunk {
	uint64_t start_pos;
	uint64_t min_tick, max_tick;
	bool any;
	uint64_t nanos_floor; /* start nanos must exceed the previous chunk's */
};

static uint64_t wall_of(const struct prof *p, uint64_t tick)
{
	if (p->sys.wall_known)
		return (uint64_t)p->time_nanos + (tick - p->sys.first_time);
	return tick; /* the sample clock: time since boot, shown as 1970 plus uptime */
}

static void bit_set(uint8_t *b, size_t i)
{
	b[i >> 3] |= (uint8_t)(1u << (i & 7));
}

static bool bit_get(const uint8_t *b, size_t i)
{
	return b[i >> 3] >> (i & 7) & 1;
}

static size_t count_bits(const uint8_t *b, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += bit_get(b, i);
	return c;
}

/* Event type id of perf event i. */
static uint32_t event_type_id(const struct prof *p, uint32_t i)
{
	if (i == p->primary_event)
		return E_EXECUTION_SAMPLE;
	return E_PERF_FIRST + i - (i > p->primary_event);
}

/*
 * What a chunk's stacks use (mappings, methods, classes, symbols,
 * packages), marked once the chunk's events are written and the tables
 * exist: the events loop marks stacks only, so it can run while another
 * thread builds the tables (see jfr_write).
 */
static void mark_tables(struct w *w)
{
	memset(w->used_method, 0, (w->nr_methods + 7) / 8 + 1);
	memset(w->used_class, 0, (w->nr_classes + 7) / 8 + 1);
	memset(w->used_sym, 0, (w->syms.count + 7) / 8 + 1);
	memset(w->used_pkg, 0, (w->nr_packages + 7) / 8 + 1);
	memset(w->used_map, 0, (w->p->nr_mappings + 7) / 8 + 1);
	for (size_t stack = 0; stack < w->p->nr_stacks; stack++) {
		uint32_t n;
		const uint32_t *locs;

		if (!bit_get(w->used_stack, stack))
			continue;
		locs = prof_stack_locs(w->p, (uint32_t)stack, &n);
		for (uint32_t i = 0; i < n; i++) {
			const struct prof_location *l = &w->p->locations[locs[i]];

			if (l->mapping != PROF_NONE)
				bit_set(w->used_map, l->mapping);
			for (uint32_t k = 0; k < w->loc_count[locs[i]]; k++) {
				uint32_t mk = w->frames[w->loc_first[locs[i]] + k].method;
				const struct jmethod *m = &w->methods[mk - 1];
				const struct jclass *c = &w->classes[m->cls - 1];

				bit_set(w->used_method, mk - 1);
				bit_set(w->used_class, m->cls - 1);
				bit_set(w->used_sym, m->name - 1);
				bit_set(w->used_sym, m->desc - 1);
				bit_set(w->used_sym, c->name - 1);
				if (c->package) {
					bit_set(w->used_pkg, c->package - 1);
					bit_set(w->used_sym, w->packages[c->package - 1] - 1);
				}
			}
		}
	}
}

/* A thread's (origin, tid) as a key of a table. */
static uint64_t thread_rep_key(const struct prof_thread *t)
{
	/* bit 32 left free for the carry of tid + 1 */
	return ((uint64_t)t->origin << 33 | t->tid) + 1;
}

/*
 * Threads are keyed in the pool by their OS thread id, as async-profiler
 * keys them: its converter shows the key as the thread's id (--threads).
 * One entry per tid for the whole file, so a key means one thread in every
 * chunk: the model's last thread of that tid whose process has the tid as
 * its pid, else its last thread of that tid. A tid that is its process's
 * pid names that process's main thread (or the idle task, tid 0) for its
 * whole life, and the last generation is the latest name (after an exec,
 * the program's rather than the launcher's); the same tid under another
 * pid is a reused tid or a recording's quirk (quipper's perf 3.8 test file
 * perf.data.throttle-3.8 has one sample of powerd, pid 1430, with tid 0,
 * beside 3206 of the idle task's: all were named powerd).
 *
 * Some tids cannot be keys. 0 (the idle task's, in system-wide recordings)
 * is JFR's null reference: async-profiler 2.10 refuses it as a key ("Zero
 * key not allowed") and the JDK gives every null thread reference that
 * thread. async-profiler reads thread keys as 32-bit signed ints, so perf's
 * -1 (u32 0xffffffff) and anything above INT32_MAX would not match their
 * entries. Those threads get the free keys from INT32_MAX down, in the
 * order of their threads: numbers no Linux tid reaches (tids stay below
 * PID_MAX_LIMIT, 2^22); the entry's osThreadId keeps the tid. So do the
 * threads of a merged profile's later inputs (prof_thread.origin) whose tid
 * an earlier input's thread has as its key: the same tid on two machines is
 * two threads. false when out of memory.
 */
static bool thread_keys(struct w *w)
{
	const struct prof *p = w->p;
	struct hmap rep;   /* (origin, tid) -> the model thread that stands for it */
	struct hmap tids;  /* tid + 1 of every thread: numbers a free key must not take */
	struct hmap taken; /* tid + 1 given as a key */
	uint32_t next = INT32_MAX; /* the next key to try for a tid that cannot be one */
	bool ok = true;

	w->thread_rep = calloc(p->nr_threads + 1, sizeof(*w->thread_rep));
	w->thread_key = calloc(p->nr_threads + 1, sizeof(*w->thread_key));
	if (!w->thread_rep || !w->thread_key)
		return false;
	hmap_init(&rep);
	hmap_init(&tids);
	hmap_init(&taken);
	for (size_t i = 0; ok && i < p->nr_threads; i++) {
		const struct prof_thread *t = &p->threads[i];
		const uint64_t *v = hmap_get(&rep, thread_rep_key(t));

		if (!v || t->pid == t->tid || p->threads[*v].pid != t->tid)
			ok = hmap_put(&rep, thread_rep_key(t), i);
		ok = ok && hmap_put(&tids, (uint64_t)t->tid + 1, 1);
	}
	for (size_t i = 0; ok && i < p->nr_threads; i++) {
		uint32_t tid = p->threads[i].tid;

		w->thread_rep[i] = (uint32_t)*hmap_get(&rep, thread_rep_key(&p->threads[i]));
		if (w->thread_rep[i] != i)
			continue; /* keyed below, by its representative */
		if (tid && tid <= INT32_MAX && !hmap_get(&taken, (uint64_t)tid + 1)) {
			w->thread_key[i] = tid;
			ok = hmap_put(&taken, (uint64_t)tid + 1, 1);
			continue;
		}
		/* skip the numbers that are some thread's tid (never 0: 2^31 threads do not fit) */
		while (hmap_get(&tids, (uint64_t)next + 1))
			next--;
		w->thread_key[i] = next--;
	}
	for (size_t i = 0; ok && i < p->nr_threads; i++)
		w->thread_key[i] = w->thread_key[w->thread_rep[i]];
	hmap_release(&rep);
	hmap_release(&tids);
	hmap_release(&taken);
	return ok;
}

/* The JFR frames of every model location (methods, classes, symbols). */
static void build_tables(struct w *w)
{
	const struct prof *p = w->p;
	size_t frames = 0, unlined = 0, methods;

	/*
	 * Sized once from the model: a JFR frame per inline line (one for a
	 * location without), exactly; methods and their symbols about one per
	 * function (a function's class is its object's) plus one per location
	 * without lines, which only a function seen under two objects' names
	 * exceeds (the tables then grow as before). Grown as they filled,
	 * these tables cost a third of their time (copies, rehashing,
	 * re-faulted pages).
	 */
	for (size_t i = 0; i < p->nr_locations; i++) {
		frames += p->locations[i].nr_lines ? p->locations[i].nr_lines : 1;
		unlined += !p->locations[i].nr_lines;
	}
	methods = p->nr_functions + unlined + 16;
	if (!vec_reserve_exact((void **)&w->frames, &w->cap_frames, frames, sizeof(*w->frames)) ||
	    !vec_reserve_exact((void **)&w->methods, &w->cap_methods, methods, sizeof(*w->methods)) ||
	    !hidx_reserve(&w->method_idx, methods) ||
	    !strtab_reserve(&w->syms, methods + p->nr_mappings + 64))
		w->nomem = true;
	for (size_t i = 0; i < p->nr_locations && !w->nomem; i++)
		location_frames(w, (uint32_t)i);
}

/* The per-chunk bitmaps of what the tables hold, sized by them; false when out of memory. */
static bool tables_bitmaps(struct w *w)
{
	w->used_method = calloc((w->nr_methods + 7) / 8 + 1, 1);
	w->used_class = calloc((w->nr_classes + 7) / 8 + 1, 1);
	w->used_sym = calloc((w->syms.count + 7) / 8 + 1, 1);
	w->used_pkg = calloc((w->nr_packages + 7) / 8 + 1, 1);
	w->used_map = calloc((w->p->nr_mappings + 7) / 8 + 1, 1);
	return w->used_method && w->used_class && w->used_sym && w->used_pkg && w->used_map;
}

static void write_event(struct w *w, struct dbuf *body, uint32_t type)
{
	put_record(&w->o.buf, type, body);
	dbuf_reset(body);
	io_out_maybe_write(&w->o);
}

static void setting(struct w *w, struct dbuf *b, uint64_t tick, uint32_t id, const char *name,
		    const char *value)
{
	jfr_put_varint(b, tick);
	jfr_put_varint(b, 0); /* duration */
	jfr_put_varint(b, 0); /* eventThread: none (no thread of the recording wrote it) */
	jfr_put_varint(b, 0); /* stackTrace: none */
	jfr_put_varint(b, id);
	jfr_put_string(b, name);
	jfr_put_string(b, value);
	write_event(w, b, E_ACTIVE_SETTING);
}

/* Recording facts, written in every chunk (each chunk stands alone). */
static void info_events(struct w *w, uint64_t tick, bool last)
{
	const struct prof *p = w->p;
	const struct strtab *s = &p->strs;
	struct dbuf b;
	char buf[512];

	dbuf_init(&b, 0);
	for (uint32_t i = 0; i < p->nr_events_desc; i++) {
		const struct prof_event_desc *e = &p->events_desc[i];
		uint32_t id = event_type_id(p, i);

		setting(w, &b, tick, id, "event", strtab_get(s, e->full_name));
		if (e->frequency) {
			snprintf(buf, sizeof(buf), "%" PRIu64 " Hz", e->frequency);
			setting(w, &b, tick, id, "frequency", buf);
			if (e->clock) {
				snprintf(buf, sizeof(buf), "%" PRIu64, (1000000000u + e->frequency / 2) /
									  e->frequency);
				setting(w, &b, tick, id, "interval", buf);
			}
		} else if (e->period) {
			snprintf(buf, sizeof(buf), "%" PRIu64, e->period);
			setting(w, &b, tick, id, "interval", buf);
		}
	}
	snprintf(buf, sizeof(buf), "uname: Linux %s %s %s", strtab_get(s, p->sys.hostname),
		 strtab_get(s, p->sys.os_release), strtab_get(s, p->sys.arch));
	jfr_put_varint(&b, tick);
	jfr_put_string(&b, buf);
	write_event(w, &b, E_OS_INFO);
	jfr_put_varint(&b, tick);
	jfr_put_string(&b, strtab_get(s, p->sys.arch));
	if (p->sys.cpuid)
		snprintf(buf, sizeof(buf), "%s (cpuid %s)", strtab_get(s, p->sys.cpu_desc),
			 strtab_get(s, p->sys.cpuid));
	else
		snprintf(buf, sizeof(buf), "%s", strtab_get(s, p->sys.cpu_desc));
	jfr_put_string(&b, buf);
	/* sockets and cores: 0, unknown (perf's CPU_TOPOLOGY is not read), rather than a guess */
	put_u32(&b, 0);
	put_u32(&b, 0);
	put_u32(&b, p->sys.nr_cpus);
	write_event(w, &b, E_CPU_INFO);
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct prof_mapping *m = &p->mappings[i];

		if (!bit_get(w->used_map, i) || m->kind == PROF_MAP_KERNEL || m->kind == PROF_MAP_JIT)
			continue;
		jfr_put_varint(&b, tick);
		jfr_put_string(&b, strtab_get(s, m->filename));
		jfr_put_varint(&b, m->start);
		jfr_put_varint(&b, m->limit);
		jfr_put_string(&b, strtab_get(s, m->build_id));
		jfr_put_varint(&b, m->has_load_bias ? m->load_bias : 0);
		write_event(w, &b, E_NATIVE_LIBRARY);
	}
	if (last && p->sys.lost_samples) {
		jfr_put_varint(&b, tick);
		jfr_put_varint(&b, p->sys.lost_samples);
		write_event(w, &b, E_LOST_SAMPLES);
	}
	dbuf_release(&b);
}

static void pool_head(struct dbuf *b, uint32_t type, size_t count)
{
	jfr_put_varint(b, type);
	jfr_put_varint(b, count);
}

static void write_checkpoint(struct w *w, uint64_t tick, struct dbuf *b)
{
	const struct prof *p = w->p;
	size_t n_thr = count_bits(w->used_thread, p->nr_threads);
	size_t n_stk = count_bits(w->used_stack, p->nr_stacks);
	size_t n_met = count_bits(w->used_method, w->nr_methods);
	size_t n_cls = count_bits(w->used_class, w->nr_classes);
	size_t n_pkg = count_bits(w->used_pkg, w->nr_packages);
	size_t n_sym = count_bits(w->used_sym, w->syms.count);
	/* no empty pools: the JDK throws an InternalError on one */
	size_t pools = 2 + !!n_thr + !!n_stk + !!n_met + !!n_cls + !!n_pkg + !!n_sym;

	jfr_put_varint(b, tick);
	jfr_put_varint(b, 0); /* duration */
	jfr_put_varint(b, 0); /* delta to the previous checkpoint: none */
	dbuf_putc(b, 1);   /* checkpoint type: flush (one byte for every reader) */
	jfr_put_varint(b, pools);
	pool_head(b, T_FRAMETYPE, FT__COUNT);
	for (int i = 0; i < FT__COUNT; i++) {
		jfr_put_varint(b, (uint64_t)i);
		jfr_put_string(b, frame_type_names[i]);
	}
	pool_head(b, T_THREADSTATE, 3);
	jfr_put_varint(b, 0);
	jfr_put_string(b, "STATE_DEFAULT");
	jfr_put_varint(b, 1);
	jfr_put_string(b, "STATE_RUNNABLE");
	jfr_put_varint(b, 2);
	jfr_put_string(b, "STATE_SLEEPING");
	if (n_thr) {
		pool_head(b, T_THREAD, n_thr);
		for (size_t i = 0; i < p->nr_threads; i++) {
			const struct prof_thread *t = &p->threads[i];

			if (!bit_get(w->used_thread, i))
				continue;
			jfr_put_varint(b, w->thread_key[i]);
			jfr_put_string(b, strtab_get(&p->strs, t->name));
			jfr_put_varint(b, t->tid);
			jfr_put_string(b, NULL);
			jfr_put_varint(b, 0);
		}
	}
	if (n_stk) {
		pool_head(b, T_STACKTRACE, n_stk);
		for (size_t s = 0; s < p->nr_stacks; s++) {
			uint32_t n, nf = 0;
			const uint32_t *locs;

			if (!bit_get(w->used_stack, s))
				continue;
			locs = prof_stack_locs(p, (uint32_t)s, &n);
			for (uint32_t i = 0; i < n; i++)
				nf += w->loc_count[locs[i]];
			jfr_put_varint(b, s + 1);
			dbuf_putc(b, prof_stack_truncated(p, (uint32_t)s));
			jfr_put_varint(b, nf);
			for (uint32_t i = 0; i < n; i++) {
				for (uint32_t k = 0; k < w->loc_count[locs[i]]; k++) {
					const struct jframe *f = &w->frames[w->loc_first[locs[i]] + k];

					jfr_put_varint(b, f->method);
					put_u32(b, f->line);
					put_u32(b, 0);
					jfr_put_varint(b, f->type);
				}
			}
			io_out_maybe_write(&w->o);
		}
	}
	if (n_met) {
		pool_head(b, T_METHOD, n_met);
		for (size_t i = 0; i < w->nr_methods; i++) {
			const struct jmethod *m = &w->methods[i];

			if (!bit_get(w->used_method, i))
				continue;
			jfr_put_varint(b, i + 1);
			jfr_put_varint(b, m->cls);
			jfr_put_varint(b, m->name);
			jfr_put_varint(b, m->desc);
			put_u32(b, m->modifiers);
			dbuf_putc(b, 0);
			io_out_maybe_write(&w->o);
		}
	}
	if (n_cls) {
		pool_head(b, T_CLASS, n_cls);
		for (size_t i = 0; i < w->nr_classes; i++) {
			if (!bit_get(w->used_class, i))
				continue;
			jfr_put_varint(b, i + 1);
			jfr_put_varint(b, 0); /* class loader: none */
			jfr_put_varint(b, w->classes[i].name);
			jfr_put_varint(b, w->classes[i].package);
			put_u32(b, 0);
			dbuf_putc(b, 0);
			io_out_maybe_write(&w->o);
		}
	}
	if (n_pkg) {
		pool_head(b, T_PACKAGE, n_pkg);
		for (size_t i = 0; i < w->nr_packages; i++) {
			if (!bit_get(w->used_pkg, i))
				continue;
			jfr_put_varint(b, i + 1);
			jfr_put_varint(b, w->packages[i]);
		}
	}
	if (n_sym) {
		pool_head(b, T_SYMBOL, n_sym);
		for (size_t i = 0; i < w->syms.count; i++) {
			if (!bit_get(w->used_sym, i))
				continue;
			jfr_put_varint(b, i + 1);
			jfr_put_string(b, strtab_get(&w->syms, (uint32_t)i));
			io_out_maybe_write(&w->o);
		}
	}
}

static void write_metadata(struct w *w, uint64_t tick, struct dbuf *b)
{
	const struct prof *p = w->p;
	struct mb m;
	struct hmap dups; /* perf.<Name> -> how often seen */
	/* every perf event but the one written as jdk.ExecutionSample, if any */
	size_t nperf = p->nr_events_desc - (p->primary_event < p->nr_events_desc);
	char (*names)[160] = calloc(nperf + 1, sizeof(*names));
	char (*labels)[160] = calloc(nperf + 1, sizeof(*labels));

	if (!names || !labels) {
		w->nomem = true;
		free(names);
		free(labels);
		return;
	}
	strtab_init(&m.strs);
	dbuf_init(&m.el, 0);
	hmap_init(&dups);
	el_head(&m, "root", 0);
	jfr_put_varint(&m.el, 2);
	el_head(&m, "metadata", 0);
	jfr_put_varint(&m.el, NF(static_classes) + nperf);
	for (size_t i = 0; i < NF(static_classes); i++)
		el_class(&m, &static_classes[i]);
	for (uint32_t i = 0, k = 0; i < p->nr_events_desc; i++) {
		const struct prof_event_desc *e = &p->events_desc[i];
		const char *en = strtab_get(&p->strs, e->name);
		struct fdef fdefs[NF(f_perf_clock_event) + PROF_MAX_FIELDS];
		struct cdef c;
		size_t o;

		if (i == p->primary_event)
			continue;
		/* perf.<Name>: the event name with anything but letters, digits and '_' as '_' */
		o = (size_t)snprintf(names[k], sizeof(names[k]), "perf.");
		for (const char *q = en; *q && o + 1 < sizeof(names[k]); q++, o++) {
			char ch = *q;
			bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				  (ch >= '0' && ch <= '9') || ch == '_';

			names[k][o] = ok ? ch : '_';
		}
		names[k][o] = 0;
		if (names[k][5] >= 'a' && names[k][5] <= 'z')
			names[k][5] = (char)(names[k][5] - 'a' + 'A');
		/* an event recorded twice (perf adds dummy:u per session): types need distinct
		 * names; the n-th repeat is NAME_n (a table, not a search: files may hold
		 * thousands of events) */
		{
			uint64_t h = 1469598103934665603ull, *seen;

			for (const char *q = names[k]; *q; q++)
				h = (h ^ (unsigned char)*q) * 1099511628211ull;
			seen = hmap_get(&dups, h);
			if (seen) {
				(*seen)++;
				o = strlen(names[k]);
				snprintf(names[k] + o, sizeof(names[k]) - o, "_%" PRIu64, *seen);
			} else if (!hmap_put(&dups, h, 1)) {
				w->nomem = true;
			}
		}
		snprintf(labels[k], sizeof(labels[k]), "perf %s", en);
		memset(&c, 0, sizeof(c));
		c.id = event_type_id(p, i);
		c.name = names[k];
		c.super = EVENT;
		c.label = labels[k];
		c.desc = e->tracepoint ? "Samples of a perf tracepoint" : "Samples of a perf event";
		c.cat[0] = "Linux perf";
		c.fields = e->clock ? f_perf_clock_event : f_perf_event;
		c.nfields = e->clock ? NF(f_perf_clock_event) : NF(f_perf_event);
		if (e->nr_fields && e->nr_fields <= PROF_MAX_FIELDS) {
			/* a tracepoint's decoded fields follow perf's (fdefs lives until the class is written) */
			const struct fdef *base = c.fields;

			memcpy(fdefs, base, c.nfields * sizeof(*fdefs));
			for (uint32_t f = 0; f < e->nr_fields; f++) {
				struct fdef *d = &fdefs[c.nfields + f];

				memset(d, 0, sizeof(*d));
				d->name = strtab_get(&p->strs, e->field_name[f]);
				d->type = e->field_num[f] ? T_LONG : T_STRING;
				d->label = d->name;
			}
			c.fields = fdefs;
			c.nfields += e->nr_fields;
		}
		if (e->offcpu) {
			c.name = "perf.OffCPU";
			c.label = "Off-CPU Time";
			c.desc = "A thread off CPU: from its switch-out (sched:sched_switch, with the stack "
				 "it blocked in) until it ran again, and the state it left in";
			c.fields = f_offcpu;
			c.nfields = NF(f_offcpu);
		}
		el_class(&m, &c);
		k++;
	}
	el_head(&m, "region", 2);
	el_attr(&m, "locale", "en_US");
	el_attr(&m, "gmtOffset", "0");
	jfr_put_varint(&m.el, 0);

	jfr_put_varint(b, tick);
	jfr_put_varint(b, 0); /* duration */
	jfr_put_varint(b, 1); /* metadata id: the same types in every chunk */
	jfr_put_varint(b, m.strs.count);
	for (uint32_t i = 0; i < m.strs.count; i++)
		jfr_put_string(b, strtab_get(&m.strs, i));
	dbuf_append(b, m.el.data, m.el.len);
	if (m.el.err)
		w->nomem = true;
	dbuf_release(&m.el);
	strtab_release(&m.strs);
	hmap_release(&dups);
	free(names);
	free(labels);
}

static void chunk_begin(struct w *w, struct chunk *c)
{
	unsigned char zero[68];

	memset(zero, 0, sizeof(zero));
	c->start_pos = io_out_tell(&w->o);
	c->any = false;
	c->min_tick = c->max_tick = 0;
	dbuf_append(&w->o.buf, zero, sizeof(zero));
	memset(w->used_stack, 0, (w->p->nr_stacks + 7) / 8 + 1);
	memset(w->used_thread, 0, (w->p->nr_threads + 7) / 8 + 1);
	/* the rest is marked from the chunk's stacks at its end (mark_tables) */
}

#define CP_SIZE_BYTES 5

static void chunk_end(struct w *w, struct chunk *c, bool last)
{
	const struct prof *p = w->p;
	uint64_t start_tick = c->any ? c->min_tick : p->sys.first_time;
	uint64_t end_tick = c->any ? c->max_tick : p->sys.last_time;
	uint64_t cp_pos, meta_pos, end, nanos;
	unsigned char h[68];
	struct dbuf b;

	if (end_tick < start_tick)
		end_tick = start_tick;
	info_events(w, start_tick, last);
	dbuf_init(&b, 0);
	/*
	 * The checkpoint (every stack trace, method and symbol of the chunk) is
	 * written straight into the output, flushed as it grows, under a size
	 * field of fixed width patched at the end: a padded varint, as
	 * HotSpot's own checkpoint writer does, so no copy of it is held.
	 */
	cp_pos = io_out_tell(&w->o);
	{
		static const unsigned char pad[CP_SIZE_BYTES] = { 0x80, 0x80, 0x80, 0x80, 0x00 };
		unsigned char sz[CP_SIZE_BYTES];
		uint64_t len;

		dbuf_append(&w->o.buf, pad, sizeof(pad));
		jfr_put_varint(&w->o.buf, 1);
		write_checkpoint(w, start_tick, &w->o.buf);
		len = io_out_tell(&w->o) - cp_pos;
		if (len >> (7 * CP_SIZE_BYTES))
			w->nomem = true; /* over 32 GiB: not representable (never in practice) */
		jfr_enc_varint_fixed(sz, len, CP_SIZE_BYTES);
		io_out_patch(&w->o, cp_pos, sz, sizeof(sz));
	}
	meta_pos = io_out_tell(&w->o);
	write_metadata(w, start_tick, &b);
	put_record(&w->o.buf, 0, &b);
	if (b.err)
		w->nomem = true;
	dbuf_release(&b);
	end = io_out_tell(&w->o);
	nanos = wall_of(p, start_tick);
	if (nanos < c->nanos_floor)
		nanos = c->nanos_floor;
	c->nanos_floor = nanos + 1;
	memcpy(h, "FLR\0", 4);
	jfr_put_be(h + 4, 2, 2);
	jfr_put_be(h + 6, 0, 2);
	jfr_put_be(h + 8, end - c->start_pos, 8);
	jfr_put_be(h + 16, cp_pos - c->start_pos, 8);
	jfr_put_be(h + 24, meta_pos - c->start_pos, 8);
	jfr_put_be(h + 32, nanos, 8);
	jfr_put_be(h + 40, end_tick - start_tick, 8);
	jfr_put_be(h + 48, start_tick, 8);
	jfr_put_be(h + 56, 1000000000u, 8);
	h[64] = 0; /* complete */
	h[65] = 0;
	jfr_put_be(h + 66, last ? 3 : 1, 2);
	io_out_patch(&w->o, c->start_pos, h, sizeof(h));
	io_out_maybe_write(&w->o);
}

/* Ends a chunk with the pools of what its stacks use. */
static void close_chunk(struct w *w, struct chunk *c, bool last)
{
	mark_tables(w);
	chunk_end(w, c, last);
}

static void w_release(struct w *w)
{
	strtab_release(&w->syms);
	free(w->methods);
	free(w->classes);
	free(w->packages);
	free(w->frames);
	free(w->loc_first);
	free(w->loc_count);
	free(w->fn_memo);
	free(w->map_class);
	free(w->map_bid_class);
	free(w->used_stack);
	free(w->used_thread);
	free(w->thread_rep);
	free(w->thread_key);
	free(w->used_method);
	free(w->used_class);
	free(w->used_sym);
	free(w->used_pkg);
	free(w->used_map);
	hidx_release(&w->method_idx);
	hmap_release(&w->class_idx);
	hmap_release(&w->package_idx);
	dbuf_release(&w->o.buf);
	dbuf_release(&w->body);
}

/* An off-CPU interval: perf.OffCPU's fields in f_offcpu's order. */
static void put_offcpu(struct w *w, const struct prof_event *ev)
{
	dbuf_reset(&w->body);
	jfr_put_varint(&w->body, ev->time);
	jfr_put_varint(&w->body, ev->period);
	jfr_put_varint(&w->body, w->thread_key[ev->thread]);
	jfr_put_varint(&w->body, ev->stack + 1);
	jfr_put_string(&w->body, ev->label ? strtab_get(&w->p->strs, ev->label) : NULL);
	put_record(&w->o.buf, event_type_id(w->p, ev->event), &w->body);
	io_out_maybe_write(&w->o);
}

/*
 * A perf event with tracepoint fields: f_perf_event's (or the clock
 * event's) fields, then the fields' values from its labels (a missing one
 * as an empty string or 0: every event of the type has every field).
 */
static void put_fields_event(struct w *w, const struct prof_event *ev)
{
	const struct prof *p = w->p;
	const struct prof_event_desc *e = &p->events_desc[ev->event];
	const struct prof_label *lb = ev->label && ev->label - 1 + (size_t)e->nr_fields <= p->nr_labels
					      ? &p->labels[ev->label - 1]
					      : NULL;

	dbuf_reset(&w->body);
	jfr_put_varint(&w->body, ev->time);
	jfr_put_varint(&w->body, w->thread_key[ev->thread]);
	jfr_put_varint(&w->body, ev->stack + 1);
	jfr_put_varint(&w->body, ev->period);
	jfr_put_varint(&w->body, ev->weight);
	jfr_put_varint(&w->body, ev->cpu);
	for (uint32_t f = 0; f < e->nr_fields && f < PROF_MAX_FIELDS; f++) {
		if (e->field_num[f])
			jfr_put_varint(&w->body, lb ? (uint64_t)lb[f].num : 0);
		else
			jfr_put_string(&w->body, lb ? strtab_get(&p->strs, lb[f].str) : "");
	}
	put_record(&w->o.buf, event_type_id(p, ev->event), &w->body);
	io_out_maybe_write(&w->o);
}

enum conv_err jfr_write(const struct prof *p, const struct jfr_opts *o, int fd,
			struct jfr_stats *st, struct conv_diag *diag)
{
	struct w w;
	struct chunk c;
	struct prof_event ev;
	uint64_t chunk_size = o && o->chunk_size ? o->chunk_size : JFR_CHUNK_SIZE_DEFAULT;
	enum conv_err err = CONV_E_OK;

	memset(&w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	memset(st, 0, sizeof(*st));
	w.p = p;
	io_out_init(&w.o, fd, o ? o->flush : NULL);
	strtab_init(&w.syms);
	hidx_init(&w.method_idx);
	hmap_init(&w.class_idx);
	hmap_init(&w.package_idx);
	dbuf_init(&w.body, 0);
	w.fn_memo = calloc(p->nr_functions + 1, sizeof(*w.fn_memo));
	w.map_class = calloc(p->nr_mappings + 1, sizeof(uint32_t));
	w.map_bid_class = calloc(p->nr_mappings + 1, sizeof(uint32_t));
	w.loc_first = calloc(p->nr_locations + 1, sizeof(uint32_t));
	w.loc_count = calloc(p->nr_locations + 1, sizeof(uint32_t));
	if (!w.loc_first || !w.loc_count)
		w.nomem = true;
	w.used_stack = calloc((p->nr_stacks + 7) / 8 + 1, 1);
	w.used_thread = calloc((p->nr_threads + 7) / 8 + 1, 1);
	if (w.nomem || !w.used_stack || !w.used_thread || !thread_keys(&w)) {
		err = conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory for the JFR tables");
		goto out;
	}
	/*
	 * The tables (a method per function and class, its symbols) first, on
	 * this thread. Built on a thread of their own while the events were
	 * written (stop 12), they made three threads with the pprof writer's
	 * on two cores, and the events then waited for them: the write phase
	 * took 81.5 ms (94.0 ms with -n) against 69.5 ms (77.5 ms) this way
	 * (90 MB benchmark file, conv -v, medians of 12 interleaved runs).
	 */
	build_tables(&w);
	if (w.nomem || !tables_bitmaps(&w)) {
		err = conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "no memory for the JFR tables");
		goto out;
	}
	if (p->events) {
		err = prof_events_rewind(p->events, diag);
		if (err)
			goto out;
	}
	chunk_begin(&w, &c);
	st->chunks = 1;
	while (p->events && prof_events_next(p->events, &ev)) {
		if (ev.event == PROF_EVENT_OFFCPU)
			ev.event = p->offcpu_event;
		if (ev.stack >= p->nr_stacks || ev.thread >= p->nr_threads ||
		    ev.event >= p->nr_events_desc) {
			err = conv_fail(diag, CONV_E_INVAL, UINT64_MAX,
					"sample event refers to stack %" PRIu32 " of %zu", ev.stack,
					p->nr_stacks);
			goto out;
		}
		if (c.any && io_out_tell(&w.o) - c.start_pos >= chunk_size) {
			/* this chunk is full and there is more: close it, start the next */
			close_chunk(&w, &c, false);
			chunk_begin(&w, &c);
			st->chunks++;
		}
		if (!c.any || ev.time < c.min_tick)
			c.min_tick = ev.time;
		if (!c.any || ev.time > c.max_tick)
			c.max_tick = ev.time;
		/* an interval ends after it starts: the chunk lasts until it ended */
		if (p->events_desc[ev.event].offcpu && ev.time + ev.period > c.max_tick)
			c.max_tick = ev.time + ev.period;
		c.any = true;
		bit_set(w.used_stack, ev.stack);
		bit_set(w.used_thread, w.thread_rep[ev.thread]);
		if (p->events_desc[ev.event].offcpu) {
			put_offcpu(&w, &ev);
		} else if (p->events_desc[ev.event].nr_fields && ev.event != p->primary_event) {
			put_fields_event(&w, &ev);
		} else {
			/*
			 * The record built in one buffer and appended once: the
			 * same bytes as put_record, without a body buffer and a
			 * call per field (this loop runs once per sample).
			 */
			unsigned char rec[16 + 8 * 10], *bp = rec + 16, *e = bp;
			size_t inner, sl;

			e = jfr_enc_varint(e, event_type_id(p, ev.event));
			e = jfr_enc_varint(e, ev.time);
			e = jfr_enc_varint(e, w.thread_key[ev.thread]);
			e = jfr_enc_varint(e, ev.stack + 1);
			if (ev.event == p->primary_event) {
				*e++ = 0; /* STATE_DEFAULT: a CPU sample */
			} else {
				e = jfr_enc_varint(e, ev.period);
				e = jfr_enc_varint(e, ev.weight);
				e = jfr_enc_varint(e, ev.cpu); /* UINT32_MAX: -1 as an unsigned 32-bit field */
			}
			inner = (size_t)(e - bp);
			sl = size_field_len(inner);
			jfr_enc_varint(bp - sl, inner + sl);
			dbuf_append(&w.o.buf, bp - sl, sl + inner);
			io_out_maybe_write(&w.o);
		}
		st->events++;
		if (w.o.io_errno)
			break;
	}
	if (p->events && prof_events_status(p->events)) {
		err = conv_fail(diag, CONV_E_IO, UINT64_MAX, "reading the event spool back failed");
		goto out;
	}
	close_chunk(&w, &c, true);
	st->remote_frames = w.remote_frames;
	if (w.nomem) {
		err = conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
		goto out;
	}
	err = io_out_finish(&w.o, &st->bytes, diag);
out:
	w_release(&w);
	return err;
}
