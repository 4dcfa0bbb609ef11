// Tar archives as WebDataset shards use them: indexing an archive's regular-file members
// (name, data offset, size) from the 512-byte headers alone, and writing the ustar layout.
//
// Why our own parser: a shard reader needs each member's byte offset in the file so that
// many workers can pread() any member at any time (DALI's webdataset reader builds its own
// tar index for the same reason); libarchive's API streams members in order and does not
// give offsets.
//
// Layout read (POSIX.1-1988 ustar, POSIX.1-2001 pax, and GNU tar's extensions, as Python's
// tarfile and GNU tar 1.34 write them):
//   header   512 bytes: name[100] at 0, mode[8] 100, uid[8] 108, gid[8] 116, size[12] 124,
//            mtime[12] 136, chksum[8] 148, typeflag 156, linkname[100] 157, magic[6] 257
//            ("ustar\0" POSIX, "ustar " GNU), version[2] 263, uname[32] 265, gname[32] 297,
//            devmajor[8] 329, devminor[8] 337, prefix[155] 345 (POSIX only: the name is
//            prefix + "/" + name). Numbers are octal text (NUL/space padded); GNU base-256
//            (first byte 0x80) is read too. chksum = the sum of the header's bytes (unsigned,
//            or signed as some old tars wrote) with the chksum field taken as 8 spaces.
//   data     `size` bytes right after the header, padded with zeros to a multiple of 512.
//   types    '0', '\0' (a name ending in '/' is a directory) and '7': regular files, listed;
//            'x' (pax extended header for the next member: "LEN key=value\n" records; the
//            keys `path` and `size` are honoured), 'g' (pax global header: skipped), 'L' (GNU
//            long name of the next member), 'K' (GNU long link name): consumed; '1'-'6'
//            (links, devices, directories, fifos): skipped, and their size field ignored, as
//            tarfile does; any other type: skipped with its data.
//   end      the first all-zero header block (POSIX writes two; tarfile and GNU tar stop at
//            the first). A file that ends without one is reported as truncated (tarfile
//            accepts it silently; a shard cut on a block boundary would lose samples).
//
// Errors (TarIndex::error, or thrown as DatasetError by callers), each naming the archive,
// the member (or the previous one when the header itself is bad), the byte offset of the
// header and the reason: a header checksum mismatch (at byte 0: "not a tar file"), a
// header cut by the end of the file, a member whose data runs past the end of the file,
// no end-of-archive block, a bad octal field, a malformed pax record, a pax or GNU
// long-name header with no member after it, an extended header larger than
// kMaxExtendedHeader.
//
// Layout written (append_ustar_member): POSIX ustar, magic "ustar\0" version "00", the
// given mode and mtime, uid/gid 0, empty uname/gname, the name in the 100-byte name field
// (names up to 100 bytes; pack's names are short), data padded to 512; end of archive:
// two zero blocks (kEndOfArchive).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pipebench {

inline constexpr size_t kTarBlock = 512;  ///< bytes per header and per data block
/// Largest pax extended header or GNU long name accepted, bytes.
inline constexpr uint64_t kMaxExtendedHeader = 1 << 20;

/// One regular-file member.
struct TarMember {
  std::string name;            ///< full path inside the archive (pax path, GNU long name, prefix/name)
  uint64_t header_offset = 0;  ///< byte offset of its own ustar header in the file
  uint64_t data_offset = 0;    ///< byte offset of its first data byte
  uint64_t size = 0;           ///< data bytes
};

/// What index_tar found: the regular members up to the end or up to the first error.
struct TarIndex {
  std::vector<TarMember> members;
  /// Empty when the whole archive was read; else "<archive>: <where>: <reason>".
  std::string error;
  /// The member the error is about, when its name is known (truncated data); else "".
  std::string error_member;
  size_t headers = 0;  ///< header blocks read (all types), to tell an empty archive apart
};

/// Indexes the archive open on `fd` (file_size bytes; `archive` names it in messages) by
/// reading its headers only (pread; data is seeked over). Stops at the first error and
/// reports it in TarIndex::error (never throws for bad content; a read error is a bad
/// content error too).
TarIndex index_tar(int fd, uint64_t file_size, const std::string& archive);

/// Reads exactly n bytes at offset (pread, EINTR retried); returns the bytes read (fewer
/// only at the end of the file), or -1 with errno set.
int64_t pread_full(int fd, uint8_t* out, size_t n, uint64_t offset);

/// Appends one ustar header for a regular file plus its data and padding. Throws
/// std::invalid_argument when the name is empty or longer than 100 bytes.
void append_ustar_member(std::string& out, std::string_view name, std::string_view data,
                         int64_t mtime_seconds, unsigned mode = 0644);

/// Appends the end-of-archive marker: two zero blocks.
void append_end_of_archive(std::string& out);

/// The checksum of a 512-byte header with the chksum field taken as spaces (unsigned sum).
uint32_t ustar_checksum(const uint8_t* header);

}  // namespace pipebench
