/*
 * A unit's DWARF line table (.debug_line, versions 2 to 5) decoded by conv:
 * the rows and the file names the symbolizer asks libdw for, without
 * libdw's per-row allocation and merge sort of the whole table (a third of
 * a lookup when addresses spread over every unit).
 *
 * It answers exactly as libdw 0.188's dwarf_getsrc_die, dwarf_linesrc and
 * dwarf_filesrc do (same row order, same joined file names); anything it
 * does not decode the same way makes dwline_decode give up, and the caller
 * then asks libdw.
 */
#ifndef CONV_SYMBOLIZE_DWLINE_H
#define CONV_SYMBOLIZE_DWLINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 16 bytes: a unit's table is decoded whole, so rows are kept small (units with more files decline). */
struct dwline_row {
	uint64_t addr;
	int32_t line;
	uint16_t column;
	uint16_t file : 15; /* index into files */
	uint16_t end_sequence : 1;
};

struct dwline_table {
	struct dwline_row *rows; /* in libdw's order: address, end markers first, then program order */
	size_t nr_rows;
	char **files; /* names as libdw joins them (dir + "/" + name unless absolute) */
	size_t nr_files;
};

/* The sections a line table reads from (NULL/0 when absent). */
struct dwline_sections {
	const uint8_t *line, *line_str, *str;
	size_t line_len, line_str_len, str_len;
	bool swap; /* the file's byte order is not the host's */
};

/*
 * Decodes the table at offset off of .debug_line for a unit with addresses
 * of cu_addr_size bytes (used before DWARF 5) and compilation directory
 * comp_dir (may be NULL). false when the table is malformed or uses
 * something this decoder does not handle (the caller uses libdw then); t is
 * left empty in that case.
 */
bool dwline_decode(struct dwline_table *t, const struct dwline_sections *s, uint64_t off,
		   uint8_t cu_addr_size, const char *comp_dir);

/* The row covering pc (as dwarf_getsrc_die answers), or NULL. */
const struct dwline_row *dwline_find(const struct dwline_table *t, uint64_t pc);

void dwline_release(struct dwline_table *t);

#endif
