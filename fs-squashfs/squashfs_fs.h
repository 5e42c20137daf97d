/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * livesquash: the squashfs 4.0 on-disk format, and nothing else.
 *
 * Every structure here is exactly what the image holds, little-endian. The
 * rest of the driver converts a structure to CPU order once, right after it
 * has been read, and never looks at these types again.
 */
#ifndef __LIVESQUASH_SQUASHFS_FS_H
#define __LIVESQUASH_SQUASHFS_FS_H

#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/bits.h>

#define SQFS_MAGIC		0x73717368
#define SQFS_MAJOR		4
#define SQFS_MINOR		0

#define SQFS_MIN_BLOCK_LOG	12
#define SQFS_MAX_BLOCK_LOG	20

/* metadata blocks: u16 header, at most 8 KiB once decompressed */
#define SQFS_META_SIZE		8192
#define SQFS_META_UNCOMPRESSED	0x8000
#define SQFS_META_LEN_MASK	0x7fff

/* data block and fragment size words */
#define SQFS_DATA_UNCOMPRESSED	BIT(24)
#define SQFS_DATA_LEN_MASK	(SQFS_DATA_UNCOMPRESSED - 1)

#define SQFS_NO_TABLE		(~0ULL)
#define SQFS_NO_FRAGMENT	(~0U)
#define SQFS_NO_XATTR		(~0U)

#define SQFS_NAME_MAX		256
#define SQFS_DIR_RUN_MAX	256

/* superblock flags */
#define SQFS_FLAG_NO_FRAGMENTS	0x0010
#define SQFS_FLAG_EXPORTABLE	0x0080
#define SQFS_FLAG_NO_XATTRS	0x0200
#define SQFS_FLAG_COMP_OPTS	0x0400

/* compressor ids */
enum {
	SQFS_COMP_GZIP = 1,
	SQFS_COMP_LZMA = 2,
	SQFS_COMP_LZO = 3,
	SQFS_COMP_XZ = 4,
	SQFS_COMP_LZ4 = 5,
	SQFS_COMP_ZSTD = 6,
};

/* inode types: 1-7 basic, 8-14 the extended form of the same kind */
enum {
	SQFS_T_DIR = 1,
	SQFS_T_REG = 2,
	SQFS_T_SYMLINK = 3,
	SQFS_T_BLKDEV = 4,
	SQFS_T_CHRDEV = 5,
	SQFS_T_FIFO = 6,
	SQFS_T_SOCKET = 7,
	SQFS_T_LDIR = 8,
	SQFS_T_LREG = 9,
	SQFS_T_LSYMLINK = 10,
	SQFS_T_LBLKDEV = 11,
	SQFS_T_LCHRDEV = 12,
	SQFS_T_LFIFO = 13,
	SQFS_T_LSOCKET = 14,
};

#define SQFS_T_EXT_DELTA	7

struct sqfs_super {
	__le32 magic;
	__le32 inode_count;
	__le32 mkfs_time;
	__le32 block_size;
	__le32 frag_count;
	__le16 compressor;
	__le16 block_log;
	__le16 flags;
	__le16 id_count;
	__le16 major;
	__le16 minor;
	__le64 root_inode;
	__le64 bytes_used;
	__le64 id_table;
	__le64 xattr_table;
	__le64 inode_table;
	__le64 dir_table;
	__le64 frag_table;
	__le64 export_table;
};

static_assert(sizeof(struct sqfs_super) == 96);

struct sqfs_inode_head {
	__le16 type;
	__le16 mode;
	__le16 uid_idx;
	__le16 gid_idx;
	__le32 mtime;
	__le32 ino;
};

static_assert(sizeof(struct sqfs_inode_head) == 16);

struct sqfs_dir_inode {
	__le32 start;
	__le32 nlink;
	__le16 size;
	__le16 offset;
	__le32 parent;
};

static_assert(sizeof(struct sqfs_dir_inode) == 16);

struct sqfs_ldir_inode {
	__le32 nlink;
	__le32 size;
	__le32 start;
	__le32 parent;
	__le16 index_count;
	__le16 offset;
	__le32 xattr;
};

static_assert(sizeof(struct sqfs_ldir_inode) == 24);

/* followed by name_len + 1 name bytes */
struct sqfs_dir_index {
	__le32 index;
	__le32 start;
	__le32 name_len;
};

static_assert(sizeof(struct sqfs_dir_index) == 12);

struct sqfs_reg_inode {
	__le32 start;
	__le32 frag;
	__le32 frag_offset;
	__le32 size;
};

static_assert(sizeof(struct sqfs_reg_inode) == 16);

struct sqfs_lreg_inode {
	__le64 start;
	__le64 size;
	__le64 sparse;
	__le32 nlink;
	__le32 frag;
	__le32 frag_offset;
	__le32 xattr;
};

static_assert(sizeof(struct sqfs_lreg_inode) == 40);

/* followed by the target, then (extended form) a __le32 xattr index */
struct sqfs_symlink_inode {
	__le32 nlink;
	__le32 target_size;
};

static_assert(sizeof(struct sqfs_symlink_inode) == 8);

struct sqfs_dev_inode {
	__le32 nlink;
	__le32 rdev;
};

static_assert(sizeof(struct sqfs_dev_inode) == 8);

struct sqfs_ldev_inode {
	__le32 nlink;
	__le32 rdev;
	__le32 xattr;
};

static_assert(sizeof(struct sqfs_ldev_inode) == 12);

struct sqfs_ipc_inode {
	__le32 nlink;
};

static_assert(sizeof(struct sqfs_ipc_inode) == 4);

struct sqfs_lipc_inode {
	__le32 nlink;
	__le32 xattr;
};

static_assert(sizeof(struct sqfs_lipc_inode) == 8);

/* a directory listing is a series of runs: one header, then count + 1 entries */
struct sqfs_dir_header {
	__le32 count;
	__le32 start;
	__le32 ino_base;
};

static_assert(sizeof(struct sqfs_dir_header) == 12);

/* followed by name_len + 1 name bytes */
struct sqfs_dir_entry {
	__le16 offset;
	__le16 ino_delta;	/* signed */
	__le16 type;
	__le16 name_len;
};

static_assert(sizeof(struct sqfs_dir_entry) == 8);

struct sqfs_frag_entry {
	__le64 start;
	__le32 size;
	__le32 unused;
};

static_assert(sizeof(struct sqfs_frag_entry) == 16);

struct sqfs_xattr_id_head {
	__le64 kv_start;
	__le32 count;
	__le32 unused;
};

static_assert(sizeof(struct sqfs_xattr_id_head) == 16);

struct sqfs_xattr_id {
	__le64 ref;
	__le32 count;
	__le32 size;
};

static_assert(sizeof(struct sqfs_xattr_id) == 16);

/* followed by name_len name bytes (no prefix, no NUL) */
struct sqfs_xattr_key {
	__le16 type;
	__le16 name_len;
};

static_assert(sizeof(struct sqfs_xattr_key) == 4);

#define SQFS_XATTR_PREFIX_MASK	0x00ff
#define SQFS_XATTR_OOL		0x0100

/* compressor option blocks */
struct sqfs_gzip_opts {
	__le32 level;
	__le16 window;
	__le16 strategy;
};

static_assert(sizeof(struct sqfs_gzip_opts) == 8);

struct sqfs_xz_opts {
	__le32 dict_size;
	__le32 filters;
};

/* sqfs_xz_opts.filters: the executable (BCJ) filters blocks may use */
#define SQFS_XZ_X86		0x01
#define SQFS_XZ_POWERPC		0x02
#define SQFS_XZ_IA64		0x04
#define SQFS_XZ_ARM		0x08
#define SQFS_XZ_ARMTHUMB	0x10
#define SQFS_XZ_SPARC		0x20
#define SQFS_XZ_ARM64		0x40
#define SQFS_XZ_RISCV		0x80

static_assert(sizeof(struct sqfs_xz_opts) == 8);

struct sqfs_lz4_opts {
	__le32 version;
	__le32 flags;
};

static_assert(sizeof(struct sqfs_lz4_opts) == 8);

#define SQFS_LZ4_LEGACY		1

/* metadata references: block offset in the table << 16 | offset in block */
static inline u64 sqfs_ref_block(u64 ref)
{
	return (ref >> 16) & 0xffffffffULL;
}

static inline unsigned int sqfs_ref_offset(u64 ref)
{
	return ref & 0xffff;
}

#endif /* __LIVESQUASH_SQUASHFS_FS_H */
