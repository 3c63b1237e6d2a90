/*
 * perf.data reader: opens a recording (path, file descriptor or memory),
 * decodes its header and metadata, and delivers its records one at a time in
 * time order, as perf itself does (records are queued per FINISHED_ROUND and
 * sorted by time; records without a time are delivered at once, in file order).
 *
 * The reader knows the perf.data format and nothing else of conv. It never
 * prints: problems found in the input are counted and kept (with their file
 * offsets) for the caller to report, and the reader goes on with what it can
 * still read. Memory use is bounded by the reorder window and the largest
 * record, not by the size of the file.
 */
#ifndef CONV_READER_READER_H
#define CONV_READER_READER_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rdr;

/* Record types 0..RDR_RECORD_TYPES-1 are counted one by one; others as unknown. */
#define RDR_RECORD_TYPES 128

enum rdr_mode { RDR_MODE_FILE, RDR_MODE_PIPE };

struct rdr_opts {
	size_t reorder_limit;    /* bytes of queued records before a forced flush; 0 = 32 MiB */
	size_t max_tracing_data; /* bytes of TRACING_DATA kept; 0 = 64 MiB */
	size_t max_problems;     /* distinct problems kept with their message; 0 = 100 */
	/*
	 * Input, decompression and time ordering on a thread of the reader's
	 * own, a round ahead of decoding and delivery (which stay on the
	 * caller's thread): the same events in the same order, sooner on a
	 * machine with a core to spare.
	 */
	bool read_ahead;
};

/* One perf event (perf_event_attr), decoded by its own attr.size. */
struct rdr_attr {
	uint32_t type;
	uint32_t size; /* attr.size as recorded (0 in the file is read as 64) */
	uint64_t config;
	uint64_t sample_period; /* or sample_freq when freq is set */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags; /* flag bit n at bit n, whatever the file's byte order */
	uint32_t wakeup_events;
	uint32_t bp_type;
	uint64_t config1;
	uint64_t config2;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint32_t aux_sample_size;
	uint64_t sig_data;
	uint64_t config3;

	bool freq;          /* sample_period holds a frequency */
	bool sample_id_all; /* non-sample records carry the sample_id trailer */
	const char *name;   /* EVENT_DESC / EVENT_UPDATE name, else derived from type/config */
	bool name_from_file; /* name came from the file, not derived */
	uint64_t *ids;      /* sample ids of this event */
	size_t nr_ids;
	uint64_t samples;   /* SAMPLE records of this event delivered so far */
};

enum rdr_bid_source {
	RDR_BID_FEATURE,   /* HEADER_BUILD_ID feature section (file mode) */
	RDR_BID_PIPE,      /* HEADER_BUILD_ID record (pipe mode) */
	RDR_BID_MMAP2,     /* inline build-id of an MMAP2 record */
};

struct rdr_build_id {
	int32_t pid;          /* machine pid (-1 = host) for table entries; process pid for MMAP2 */
	uint16_t misc;        /* cpumode in the low bits */
	uint8_t size;         /* bytes used in id */
	uint8_t id[20];
	const char *filename;
	enum rdr_bid_source source;
	uint64_t offset;      /* where it was found */
};

struct rdr_group {
	const char *name;
	uint32_t leader_idx;
	uint32_t nr_members;
};

/* What the header and the metadata records say. Strings are NULL when absent. */
struct rdr_info {
	enum rdr_mode mode;
	bool big_endian;
	uint64_t file_size;   /* UINT64_MAX when not known (pipe) */
	/*
	 * The file's modification time (ns since the epoch; 0 if not a regular
	 * file). perf rewrites the header when recording ends, so this is the
	 * end of the recording when nothing better (CLOCK_DATA) says when.
	 */
	uint64_t file_mtime_ns;
	uint64_t data_offset; /* file mode */
	uint64_t data_size;   /* file mode, as the header says */
	uint64_t features[4]; /* feature bitmap (file mode) / features seen (pipe) */

	const char *hostname, *osrelease, *perf_version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	const char **cmdline; /* perf's argv */
	size_t cmdline_len;

	struct rdr_attr *attrs;
	size_t nr_attrs;

	struct rdr_build_id *build_ids; /* table entries (feature / pipe records), not MMAP2 */
	size_t nr_build_ids;

	struct rdr_group *groups;
	size_t nr_groups;

	bool has_sample_time;
	uint64_t sample_time_first, sample_time_last;
	bool has_clock_data;
	uint32_t clock_data_version, clock_data_clockid;
	uint64_t clock_data_wall_ns, clock_data_clockid_ns;
	uint64_t clockid_res_ns;
	bool has_compressed;
	uint32_t comp_version, comp_type, comp_level, comp_ratio, comp_mmap_len;

	const uint8_t *tracing_data; /* TRACING_DATA blob, for libtraceevent */
	size_t tracing_data_len;
};

/* The sample_id trailer of non-sample records (and the matching sample fields). */
enum rdr_sid_fields {
	RDR_SID_TID = 1u << 0,
	RDR_SID_TIME = 1u << 1,
	RDR_SID_ID = 1u << 2,
	RDR_SID_STREAM_ID = 1u << 3,
	RDR_SID_CPU = 1u << 4,
};

struct rdr_sample_id {
	unsigned fields; /* enum rdr_sid_fields present */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
};

struct rdr_read_value {
	uint64_t value;
	uint64_t id;
	uint64_t lost;
};

struct rdr_branch {
	uint64_t from;
	uint64_t to;
	uint64_t flags; /* perf_branch_entry bit-field word as stored (see README for byte order) */
};

struct rdr_regs {
	uint64_t abi; /* 0 = no registers */
	uint64_t mask;
	uint32_t nr;
	const uint64_t *regs;
};

/* A decoded SAMPLE. Arrays are valid until the next rdr_next() call. */
struct rdr_sample {
	uint64_t sample_type; /* which fields below are present (attr.sample_type) */
	uint64_t id;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	struct {
		uint64_t nr;
		uint64_t time_enabled, time_running;
		const struct rdr_read_value *values;
	} read;
	uint64_t callchain_nr;
	const uint64_t *callchain;
	bool callchain_deferred_merged;   /* user part came from a CALLCHAIN_DEFERRED record */
	bool callchain_deferred_missing;  /* user part was deferred and never arrived */
	uint32_t raw_size;
	const uint8_t *raw;
	uint64_t branch_nr;
	bool branch_has_hw_idx;
	uint64_t branch_hw_idx;
	const struct rdr_branch *branches;
	const uint64_t *branch_counters; /* NULL unless BRANCH_COUNTERS */
	struct rdr_regs regs_user;
	uint64_t stack_user_size;
	const uint8_t *stack_user; /* raw stack bytes as recorded */
	uint64_t stack_user_dyn_size;
	uint64_t weight;            /* WEIGHT, or var1 of WEIGHT_STRUCT */
	uint16_t weight_var2, weight_var3;
	uint64_t data_src;
	uint64_t transaction;
	struct rdr_regs regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const uint8_t *aux;
};

struct rdr_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	const char *filename;
	bool is_mmap2;
	bool has_build_id;
	uint8_t build_id_size;
	uint8_t build_id[20];
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

struct rdr_comm {
	uint32_t pid, tid;
	const char *comm;
	bool exec;
};

struct rdr_fork_exit {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct rdr_lost {
	uint64_t id;
	uint64_t lost;
};

struct rdr_throttle {
	uint64_t time, id, stream_id;
};

struct rdr_ksymbol {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type;
	uint16_t flags;
	const char *name;
};

struct rdr_cgroup {
	uint64_t id;
	const char *path;
};

struct rdr_switch {
	bool out, preempt;
	bool cpu_wide;
	uint32_t next_prev_pid, next_prev_tid;
};

struct rdr_namespaces {
	uint32_t pid, tid;
	uint64_t nr;
};

struct rdr_auxtrace {
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu;
};

struct rdr_time_conv {
	uint64_t time_shift, time_mult, time_zero, time_cycles, time_mask;
	bool cap_user_time_zero, cap_user_time_short;
	bool has_ext; /* the last five fields were present */
};

struct rdr_deferred {
	uint64_t cookie;
	uint64_t nr;
	const uint64_t *ips;
};

struct rdr_event {
	uint32_t type;   /* record type (enum perf_record_type) */
	uint16_t misc;
	uint16_t size;   /* header.size */
	uint64_t offset; /* file offset of the record, or of the COMPRESSED record holding it */
	bool in_compressed;
	int attr;        /* index into rdr_info.attrs, -1 when none or unknown */
	bool has_time;
	uint64_t time;
	struct rdr_sample_id sid; /* trailer of non-sample records */
	const uint8_t *raw;       /* the record bytes, in the file's byte order */
	size_t raw_len;
	union {
		struct rdr_sample sample;
		struct rdr_mmap mmap;
		struct rdr_comm comm;
		struct rdr_fork_exit fork_exit;
		struct rdr_lost lost;
		struct rdr_throttle throttle;
		struct rdr_ksymbol ksymbol;
		struct rdr_cgroup cgroup;
		struct rdr_switch sw;
		struct rdr_namespaces ns;
		struct rdr_auxtrace auxtrace;
		struct rdr_time_conv time_conv;
		struct rdr_deferred deferred;
		const struct rdr_build_id *build_id; /* HEADER_BUILD_ID (pipe) */
		int attr_index;                      /* HEADER_ATTR: the attr it added, -1 if rejected */
		uint64_t feature;                    /* HEADER_FEATURE: feature id */
		uint64_t count;                      /* ID_INDEX, THREAD_MAP, CPU_MAP entries */
	} u;
};

/* Counters for everything read, skipped or repaired. */
struct rdr_stats {
	uint64_t records[RDR_RECORD_TYPES];       /* raw records by type, compressed contents included */
	uint64_t records_unknown;                 /* types the reader does not know */
	uint64_t bytes_read;                      /* bytes of input consumed */
	uint64_t compressed_bytes_in, compressed_bytes_out;
	uint64_t samples;                         /* samples delivered */
	uint64_t samples_malformed;               /* samples whose fields do not fit their record */
	uint64_t samples_unknown_attr;            /* samples whose id matches no event */
	uint64_t records_malformed;               /* other records too short for their fields */
	uint64_t lost_events;                     /* sum of LOST.lost */
	uint64_t lost_samples;                    /* sum of LOST_SAMPLES.lost */
	uint64_t time_order_violations;           /* records delivered before an earlier-flushed time */
	uint64_t reorder_forced_flushes;          /* reorder window full before FINISHED_ROUND */
	uint64_t deferred_merged, deferred_unmatched;
	uint64_t auxtrace_bytes;                  /* AUXTRACE payload bytes skipped */
	bool has_sample_time;
	uint64_t first_sample_time, last_sample_time;
	bool truncated;                           /* input ended inside a record or section */
	bool stopped;                             /* reading stopped early at a fatal problem */
};

/* A problem found in the input; the same kind is kept once, with a count. */
struct rdr_problem {
	enum conv_err code;
	uint64_t offset;      /* file offset of the first occurrence */
	uint32_t record_type; /* 0 when not about a record */
	uint64_t count;
	char msg[200];
};

/*
 * Opening reads and checks the header and, in file mode, the attrs and
 * feature sections. On failure *out is NULL and the error says why (NOTPERF,
 * UNSUPPORTED, FORMAT, IO, NOMEM); diag gets the detail when not NULL.
 */
enum conv_err rdr_open_path(struct rdr **out, const char *path, const struct rdr_opts *opts,
			    struct conv_diag *diag);
/* The fd stays the caller's; a non-seekable file-mode stream is first copied to a temp file. */
enum conv_err rdr_open_fd(struct rdr **out, int fd, const struct rdr_opts *opts,
			  struct conv_diag *diag);
/* The buffer is borrowed and must outlive the reader. */
enum conv_err rdr_open_mem(struct rdr **out, const void *data, size_t len,
			   const struct rdr_opts *opts, struct conv_diag *diag);
void rdr_close(struct rdr *r);

/*
 * Delivers the next record in time order. *ev is NULL at the end of the input.
 * The event and everything it points to stay valid until the next call.
 * Problems in the input do not make this fail: they are counted and reading
 * goes on, or stops at the last good record (then *ev is NULL and
 * rdr_stats()->stopped is set). Errors are returned only for failures of the
 * machine (CONV_E_NOMEM, CONV_E_IO while reading).
 */
enum conv_err rdr_next(struct rdr *r, const struct rdr_event **ev);

/* Header and metadata; in pipe mode it fills in as metadata records arrive. */
const struct rdr_info *rdr_info(const struct rdr *r);
const struct rdr_stats *rdr_stats(const struct rdr *r);
size_t rdr_problem_count(const struct rdr *r);
const struct rdr_problem *rdr_problem_at(const struct rdr *r, size_t i);
/* Problems beyond max_problems distinct kinds are only counted here. */
uint64_t rdr_problems_dropped(const struct rdr *r);

/* perf's name of a record type ("SAMPLE", "MMAP2", ...) or NULL if unknown. */
const char *rdr_record_name(uint32_t type);

#endif
