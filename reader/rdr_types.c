/*
 * The record types conv knows, by number: their names (for counts and
 * messages) and which of them are pipe mode's metadata. A table of its
 * own because every stage asks it: reading counts records by it, read_step
 * sorts out unknown and metadata records with it, the cli prints the names.
 */
#include "reader/reader_internal.h"

#include "reader/perf_abi.h"

static const char *const record_names[RDR_RECORD_TYPES] = {
	[PERF_REC_MMAP] = "MMAP",
	[PERF_REC_LOST] = "LOST",
	[PERF_REC_COMM] = "COMM",
	[PERF_REC_EXIT] = "EXIT",
	[PERF_REC_THROTTLE] = "THROTTLE",
	[PERF_REC_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_REC_FORK] = "FORK",
	[PERF_REC_READ] = "READ",
	[PERF_REC_SAMPLE] = "SAMPLE",
	[PERF_REC_MMAP2] = "MMAP2",
	[PERF_REC_AUX] = "AUX",
	[PERF_REC_ITRACE_START] = "ITRACE_START",
	[PERF_REC_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_REC_SWITCH] = "SWITCH",
	[PERF_REC_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_REC_NAMESPACES] = "NAMESPACES",
	[PERF_REC_KSYMBOL] = "KSYMBOL",
	[PERF_REC_BPF_EVENT] = "BPF_EVENT",
	[PERF_REC_CGROUP] = "CGROUP",
	[PERF_REC_TEXT_POKE] = "TEXT_POKE",
	[PERF_REC_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PERF_REC_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
	[PERF_REC_HEADER_ATTR] = "HEADER_ATTR",
	[PERF_REC_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
	[PERF_REC_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA",
	[PERF_REC_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
	[PERF_REC_FINISHED_ROUND] = "FINISHED_ROUND",
	[PERF_REC_ID_INDEX] = "ID_INDEX",
	[PERF_REC_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[PERF_REC_AUXTRACE] = "AUXTRACE",
	[PERF_REC_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[PERF_REC_THREAD_MAP] = "THREAD_MAP",
	[PERF_REC_CPU_MAP] = "CPU_MAP",
	[PERF_REC_STAT_CONFIG] = "STAT_CONFIG",
	[PERF_REC_STAT] = "STAT",
	[PERF_REC_STAT_ROUND] = "STAT_ROUND",
	[PERF_REC_EVENT_UPDATE] = "EVENT_UPDATE",
	[PERF_REC_TIME_CONV] = "TIME_CONV",
	[PERF_REC_HEADER_FEATURE] = "HEADER_FEATURE",
	[PERF_REC_COMPRESSED] = "COMPRESSED",
	[PERF_REC_FINISHED_INIT] = "FINISHED_INIT",
	[PERF_REC_COMPRESSED2] = "COMPRESSED2",
	[PERF_REC_BPF_METADATA] = "BPF_METADATA",
	[PERF_REC_SCHEDSTAT_CPU] = "SCHEDSTAT_CPU",
	[PERF_REC_SCHEDSTAT_DOMAIN] = "SCHEDSTAT_DOMAIN",
};

const char *rdr_record_name(uint32_t type)
{
	return type < RDR_RECORD_TYPES ? record_names[type] : NULL;
}


bool rdr_type_known(uint32_t type)
{
	return type < RDR_RECORD_TYPES && record_names[type];
}

bool rdr_type_meta(uint32_t type)
{
	return type == PERF_REC_HEADER_ATTR || type == PERF_REC_HEADER_FEATURE ||
	       type == PERF_REC_HEADER_BUILD_ID || type == PERF_REC_HEADER_TRACING_DATA ||
	       type == PERF_REC_EVENT_UPDATE;
}
