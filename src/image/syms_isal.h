/* ISA-L's inflate (libisal.so.2, Debian/Ubuntu package libisal2), opened at
 * run time by inflate.c: gzip layers inflate 2-3x faster than with zlib, and
 * a machine without it uses zlib. Declared here, never included from ISA-L:
 * the struct, enum and values below are those of isa-l/igzip_lib.h, checked
 * against ISA-L 2.30.0 (Debian libisal-dev 2.30.0-5); unit.test_image_inflate
 * compares the size and the offsets of the fields used with the real header
 * when it is installed. isal_inflate_init and isal_inflate exist since ISA-L
 * 2.10, isal_inflate_reset and the gzip trailer check since 2.21. */
#ifndef GV_IMAGE_SYMS_ISAL_H
#define GV_IMAGE_SYMS_ISAL_H

#include <stdint.h>

/* crc_flag ISAL_GZIP_NO_HDR_VER: raw deflate data, then the gzip trailer
 * (CRC-32 and length) checked. inflate.c reads each member's header itself:
 * with ISAL_GZIP, ISA-L 2.30 refuses a header with FHCRC that arrives in
 * more than one piece ("incorrect checksum"), which zlib and gzip accept. */
enum { GV_ISAL_GZIP_NO_HDR_VER = 6 };

/* isal_inflate's return values (ISAL_DECOMP_OK ... ISAL_INCORRECT_CHECKSUM) */
enum {
    GV_ISAL_DECOMP_OK = 0,
    GV_ISAL_END_INPUT = 1,
    GV_ISAL_OUT_OVERFLOW = 2,
    GV_ISAL_NEED_DICT = 6,
    GV_ISAL_INVALID_BLOCK = -1,
    GV_ISAL_INVALID_SYMBOL = -2,
    GV_ISAL_INVALID_LOOKBACK = -3,
    GV_ISAL_INVALID_WRAPPER = -4,
    GV_ISAL_UNSUPPORTED_METHOD = -5,
    GV_ISAL_INCORRECT_CHECKSUM = -6,
};

/* enum isal_block_state: ISAL_BLOCK_FINISH, a member is read and flushed */
enum { GV_ISAL_BLOCK_FINISH = 5 };

/* struct inflate_state with the header's sizes worked out:
 * inflate_huff_code_large: short_code_lookup[1 << ISAL_DECODE_LONG_BITS (12)],
 * long_code_lookup[ISAL_HUFF_CODE_LARGE_LONG_ALIGNED (1253 rounded to 1264)];
 * inflate_huff_code_small: [1 << ISAL_DECODE_SHORT_BITS (10)], [77 rounded to 80];
 * tmp_in_buffer[ISAL_DEF_MAX_HDR_SIZE (328)];
 * tmp_out_buffer[2 * ISAL_DEF_HIST_SIZE (32768) + ISAL_LOOK_AHEAD (288)]. */
struct gv_isal_inflate_state {
    uint8_t *next_out;
    uint32_t avail_out;
    uint32_t total_out;
    uint8_t *next_in;
    uint64_t read_in;
    uint32_t avail_in;
    int32_t read_in_length;
    struct {
        uint32_t short_code_lookup[1 << 12];
        uint16_t long_code_lookup[1264];
    } lit_huff_code;
    struct {
        uint16_t short_code_lookup[1 << 10];
        uint16_t long_code_lookup[80];
    } dist_huff_code;
    int block_state; /* enum isal_block_state */
    uint32_t dict_length;
    uint32_t bfinal;
    uint32_t crc_flag;
    uint32_t crc;
    uint32_t hist_bits;
    union {
        int32_t type0_block_len;
        int32_t count;
        uint32_t dict_id;
    } u;
    int32_t write_overflow_lits;
    int32_t write_overflow_len;
    int32_t copy_overflow_length;
    int32_t copy_overflow_distance;
    int16_t wrapper_flag;
    int16_t tmp_in_size;
    int32_t tmp_out_valid;
    int32_t tmp_out_processed;
    uint8_t tmp_in_buffer[328];
    uint8_t tmp_out_buffer[2 * 32768 + 288];
};

/* X(REQ|OPT, field, return type, (parameters), "exported name") */
#define GV_SYMS_ISAL(X)                                                                      \
    X(REQ, inflate_init, void, (struct gv_isal_inflate_state *), "isal_inflate_init")         \
    X(REQ, inflate_reset, void, (struct gv_isal_inflate_state *), "isal_inflate_reset")       \
    X(REQ, inflate, int, (struct gv_isal_inflate_state *), "isal_inflate")

#endif
