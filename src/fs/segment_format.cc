#include "fs/segment_format.h"

#include <cstring>

#include "fs/key_codec.h"
#include "util/buffer_pool.h"

namespace pail::fs {

SegmentBuilder::SegmentBuilder(uint64_t segment, DataCompression compression,
                               size_t expected_bytes)
    : segment_(segment), compression_(compression) {
  // Room for the footer too: a chunk is at least a few KiB, so a generous
  // entry count costs little.
  const size_t expected_entries = expected_bytes / 4096 + 1;
  body_ = TakeStringBuffer(expected_bytes + expected_entries * kSegmentEntryBytes +
                           kSegmentTrailerBytes);
}

ChunkExtent SegmentBuilder::Add(Ino ino, uint64_t index, std::string_view plain) {
  ChunkExtent e;
  e.segment = segment_;
  e.offset = static_cast<uint32_t>(body_.size());
  e.plain_len = static_cast<uint32_t>(plain.size());
  e.codec = CompressChunk(compression_, plain, &body_);
  e.stored_len = static_cast<uint32_t>(body_.size() - e.offset);
  entries_.push_back({ino, index, e.offset, e.stored_len});
  return e;
}

ChunkExtent SegmentBuilder::AddStored(Ino ino, uint64_t index, const ChunkExtent& from,
                                      std::string_view stored) {
  ChunkExtent e = from;
  e.segment = segment_;
  e.offset = static_cast<uint32_t>(body_.size());
  body_.append(stored);
  entries_.push_back({ino, index, e.offset, e.stored_len});
  return e;
}

void SegmentBuilder::Stage(Ino ino, uint64_t index, std::string_view plain) {
  // Until CompressStaged the entry's stored length is the plain length.
  entries_.push_back({ino, index, static_cast<uint32_t>(body_.size()),
                      static_cast<uint32_t>(plain.size())});
  body_.append(plain);
  staged_++;
}

std::vector<ChunkExtent> SegmentBuilder::CompressStaged() {
  std::vector<ChunkExtent> extents;
  extents.reserve(staged_);
  // A chunk's compressed form, reused across chunks and calls.
  thread_local std::string scratch;
  const size_t first = entries_.size() - staged_;
  size_t at = first < entries_.size() ? entries_[first].offset : body_.size();
  for (size_t i = first; i < entries_.size(); ++i) {
    SegmentEntry& entry = entries_[i];
    const char* plain = body_.data() + entry.offset;
    ChunkExtent e;
    e.segment = segment_;
    e.offset = static_cast<uint32_t>(at);
    e.plain_len = entry.stored_len;
    scratch.clear();
    e.codec = TryCompressChunk(compression_, std::string_view(plain, e.plain_len), &scratch);
    // `at` never passes the chunk's own offset (a stored form is never
    // longer than the plain bytes), so nothing not yet read is overwritten.
    if (e.codec == ChunkCodec::kNone) {
      e.stored_len = e.plain_len;
      if (at != entry.offset) std::memmove(body_.data() + at, plain, e.plain_len);
    } else {
      e.stored_len = static_cast<uint32_t>(scratch.size());
      std::memcpy(body_.data() + at, scratch.data(), scratch.size());
    }
    entry.offset = e.offset;
    entry.stored_len = e.stored_len;
    at += e.stored_len;
    extents.push_back(e);
  }
  body_.resize(at);
  staged_ = 0;
  return extents;
}

std::string SegmentBuilder::Finish() {
  std::string out = std::move(body_);
  out.reserve(out.size() + entries_.size() * kSegmentEntryBytes + kSegmentTrailerBytes);
  for (const SegmentEntry& e : entries_) {
    PutBigEndian64(&out, e.ino);
    PutBigEndian64(&out, e.index);
    PutBigEndian32(&out, e.offset);
    PutBigEndian32(&out, e.stored_len);
  }
  PutBigEndian32(&out, static_cast<uint32_t>(entries_.size()));
  out.append(kSegmentMagic, 8);
  entries_.clear();
  body_.clear();
  return out;
}

bool ParseSegmentFooter(std::string_view tail, uint64_t size, std::vector<SegmentEntry>* entries,
                        uint64_t* need) {
  entries->clear();
  *need = 0;
  if (size < kSegmentTrailerBytes || tail.size() > size) return false;
  if (tail.size() < kSegmentTrailerBytes) {
    *need = kSegmentTrailerBytes;
    return true;
  }
  const char* trailer = tail.data() + tail.size() - kSegmentTrailerBytes;
  if (std::memcmp(trailer + 4, kSegmentMagic, 8) != 0) return false;
  const uint64_t count = GetBigEndian32(trailer);
  const uint64_t footer = count * kSegmentEntryBytes + kSegmentTrailerBytes;
  if (footer > size) return false;
  if (tail.size() < footer) {
    *need = footer;
    return true;
  }
  const uint64_t extents_end = size - footer;
  const char* p = tail.data() + tail.size() - footer;
  entries->reserve(count);
  for (uint64_t i = 0; i < count; ++i, p += kSegmentEntryBytes) {
    SegmentEntry e{GetBigEndian64(p), GetBigEndian64(p + 8), GetBigEndian32(p + 16), GetBigEndian32(p + 20)};
    if (e.stored_len == 0 || e.offset + static_cast<uint64_t>(e.stored_len) > extents_end) {
      entries->clear();
      return false;
    }
    entries->push_back(e);
  }
  return true;
}

}  // namespace pail::fs
