// Handshake and Transmission without sockets, on a filesystem core over an
// in-memory bucket: the corners the integration tests cannot reach cheaply.
#include "nbd/handshake.h"
#include "nbd/protocol.h"
#include "nbd/transmission.h"
#include "nbd/wire.h"

#include "../fs/fs_test_util.h"

namespace pail::nbd {
namespace {

using fs::testing::FsTest;

class NbdCoreTest : public FsTest {
 protected:
  void SetUp() override {
    FsTest::SetUp();
    exports_ = std::make_unique<Exports>(*fs_);
    ASSERT_TRUE(exports_->EnsureDirectory().ok());
    ASSERT_TRUE(exports_->EnsureDirectory().ok());  // idempotent
    auto dir = fs_->Lookup(fs::testing::Root(), fs::kRootIno, kExportDirectory);
    ASSERT_TRUE(dir.ok());
    dir_ = dir->ino;
  }
  void TearDown() override {
    exports_.reset();
    FsTest::TearDown();
  }
  fs::Ino MakeExport(const std::string& name, uint64_t size) {
    fs::Ino ino = MakeFile(dir_, name);
    fs::SetAttrRequest req;
    req.size = size;
    EXPECT_TRUE(fs_->SetAttr(fs::testing::Root(), ino, req).ok());
    return ino;
  }
  static std::string Option(uint32_t option, const std::string& data, Handshake& h,
                            OptionOutcome* outcome = nullptr) {
    std::string out;
    OptionOutcome o = h.HandleOption(option, data, &out);
    if (outcome) *outcome = o;
    return out;
  }
  static std::string GoData(const std::string& name) {
    std::string d;
    PutU32(&d, static_cast<uint32_t>(name.size()));
    d += name;
    PutU16(&d, 0);
    return d;
  }
  static std::string MetaData(const std::string& name) {
    std::string d;
    PutU32(&d, static_cast<uint32_t>(name.size()));
    d += name;
    PutU32(&d, 1);
    PutU32(&d, 15);
    d += kBaseAllocation;
    return d;
  }
  // (length, flags) pairs of a BLOCK_STATUS reply.
  static std::vector<std::pair<uint32_t, uint32_t>> Descriptors(const std::string& reply) {
    WireReader r(reply);
    r.Bytes(20);  // chunk header
    EXPECT_EQ(r.U32(), kBaseAllocationId);
    std::vector<std::pair<uint32_t, uint32_t>> out;
    while (r.remaining() >= 8) {
      uint32_t length = r.U32();
      out.emplace_back(length, r.U32());
    }
    return out;
  }

  std::unique_ptr<Exports> exports_;
  fs::Ino dir_ = 0;
};

TEST_F(NbdCoreTest, DirectoriesAndBadNamesAreNoExports) {
  MakeDir(dir_, "sub");
  MakeExport("disk", 4096);
  EXPECT_EQ(exports_->Find("sub").error(), ENOENT);
  EXPECT_EQ(exports_->Find("").error(), ENOENT);
  EXPECT_EQ(exports_->Find("..").error(), ENOENT);
  EXPECT_EQ(exports_->Find("a/b").error(), ENOENT);
  EXPECT_EQ(exports_->Find(std::string("disk\0x", 6)).error(), ENOENT);
  auto list = exports_->List(100);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, std::vector<std::string>{"disk"});
}

TEST_F(NbdCoreTest, MetaContextForAnotherExportIsDroppedAtGo) {
  MakeExport("a", 4096);
  MakeExport("b", 4096);
  Handshake h(*exports_);
  ASSERT_TRUE(h.SetClientFlags(kClientFixedNewstyle | kClientNoZeroes));
  Option(kOptStructuredReply, "", h);
  Option(kOptSetMetaContext, MetaData("a"), h);
  OptionOutcome o;
  Option(kOptGo, GoData("b"), h, &o);
  ASSERT_EQ(o, OptionOutcome::kTransmit);
  EXPECT_FALSE(h.session().base_allocation);
  EXPECT_TRUE(h.session().structured_replies);
  EXPECT_TRUE(h.session().transmission_flags & kTransSendDf);

  Handshake same(*exports_);
  Option(kOptStructuredReply, "", same);
  Option(kOptSetMetaContext, MetaData("a"), same);
  Option(kOptGo, GoData("a"), same, &o);
  EXPECT_TRUE(same.session().base_allocation);
}

TEST_F(NbdCoreTest, BlockStatusIsBoundedAndCoversShrunkFiles) {
  fs::Ino ino = MakeExport("d", 4096 * fs::kChunkSize);
  // Every other chunk has data: 4096 runs, more than one reply holds.
  for (uint64_t i = 0; i < 4096; i += 2) WriteAt(ino, i * fs::kChunkSize, "x");
  Handshake h(*exports_);
  Option(kOptStructuredReply, "", h);
  Option(kOptSetMetaContext, MetaData("d"), h);
  OptionOutcome o;
  Option(kOptGo, GoData("d"), h, &o);
  ASSERT_EQ(o, OptionOutcome::kTransmit);
  Transmission t(*fs_, h.session());
  Request q;
  q.magic = kRequestMagic;
  q.type = kCmdBlockStatus;
  q.cookie = 5;
  q.offset = 0;
  q.length = 4096 * fs::kChunkSize;
  auto d = Descriptors(t.Execute(q, {}).reply);
  ASSERT_EQ(d.size(), kMaxStatusExtents);
  EXPECT_EQ(d[0], std::make_pair(uint32_t(fs::kChunkSize), 0u));
  EXPECT_EQ(d[1], std::make_pair(uint32_t(fs::kChunkSize), kStateHole | kStateZero));
  // Shrunk below what the client saw: the rest is a hole, reads are zeros.
  fs::SetAttrRequest req;
  req.size = fs::kChunkSize / 2;
  ASSERT_TRUE(fs_->SetAttr(fs::testing::Root(), ino, req).ok());
  d = Descriptors(t.Execute(q, {}).reply);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], std::make_pair(uint32_t(fs::kChunkSize / 2), 0u));
  EXPECT_EQ(d[1].second, kStateHole | kStateZero);
  EXPECT_EQ(d[0].first + d[1].first, q.length);
  q.offset = 10 * fs::kChunkSize;
  q.length = 100;
  d = Descriptors(t.Execute(q, {}).reply);
  EXPECT_EQ(d, (std::vector<std::pair<uint32_t, uint32_t>>{{100, kStateHole | kStateZero}}));
  // A zeroing request past the new end is fine too.
  q.type = kCmdWriteZeroes;
  std::string reply = t.Execute(q, {}).reply;
  WireReader r(reply);
  EXPECT_EQ(r.U32(), kStructuredReplyMagic);
  EXPECT_EQ(r.U16(), kReplyFlagDone);
  EXPECT_EQ(r.U16(), kReplyTypeNone);
}

// A READ's reply is its header in `reply` and the bytes in `data`, sent
// right behind it: the filesystem's buffer as it is, zeros past a shrunk end.
TEST_F(NbdCoreTest, ReadRepliesCarryTheDataApart) {
  fs::Ino ino = MakeExport("r", 4 * fs::kChunkSize);
  std::string bytes(3 * fs::kChunkSize, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 + 7);
  WriteAt(ino, 0, bytes);
  for (bool structured : {false, true}) {
    Handshake h(*exports_);
    if (structured) Option(kOptStructuredReply, "", h);
    OptionOutcome o;
    Option(kOptGo, GoData("r"), h, &o);
    ASSERT_EQ(o, OptionOutcome::kTransmit);
    Transmission t(*fs_, h.session());
    Request q;
    q.magic = kRequestMagic;
    q.type = kCmdRead;
    q.cookie = 9;
    q.offset = 100;
    q.length = 2 * fs::kChunkSize;
    Outcome out = t.Execute(q, {});
    EXPECT_EQ(out.data, bytes.substr(100, q.length));
    WireReader r(out.reply);
    if (structured) {
      EXPECT_EQ(r.U32(), kStructuredReplyMagic);
      EXPECT_EQ(r.U16(), kReplyFlagDone);
      EXPECT_EQ(r.U16(), kReplyTypeOffsetData);
      EXPECT_EQ(r.U64(), 9u);
      EXPECT_EQ(r.U32(), 8 + q.length);
      EXPECT_EQ(r.U64(), q.offset);
    } else {
      EXPECT_EQ(r.U32(), kSimpleReplyMagic);
      EXPECT_EQ(r.U32(), 0u);
      EXPECT_EQ(r.U64(), 9u);
    }
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r.remaining(), 0u);
    // Past the stored bytes, in the hole up to the size: zeros.
    q.offset = 3 * fs::kChunkSize - 10;
    q.length = fs::kChunkSize;
    out = t.Execute(q, {});
    EXPECT_EQ(out.data, bytes.substr(q.offset) + std::string(fs::kChunkSize - 10, '\0'));
  }
  fs::SetAttrRequest req;
  req.size = 10;
  ASSERT_TRUE(fs_->SetAttr(fs::testing::Root(), ino, req).ok());
  Handshake h(*exports_);
  OptionOutcome o;
  Option(kOptGo, GoData("r"), h, &o);
  ASSERT_EQ(o, OptionOutcome::kTransmit);
  Session stale = h.session();
  stale.export_info.size = 4 * fs::kChunkSize;  // what a client saw before the shrink
  Transmission t(*fs_, stale);
  Request q;
  q.magic = kRequestMagic;
  q.type = kCmdRead;
  q.offset = 0;
  q.length = 64;
  EXPECT_EQ(t.Execute(q, {}).data, bytes.substr(0, 10) + std::string(54, '\0'));
}

// A READ or a WRITE without FUA that needs no waiting runs through
// TryExecute (on the I/O thread) and replies exactly as Execute; anything
// else is left to Execute.
TEST_F(NbdCoreTest, TryExecuteRunsOnlyReadsAndWritesThatNeedNoWaiting) {
  fs::Ino ino = MakeExport("t", 64 * fs::kChunkSize);
  std::string bytes(40 * fs::kChunkSize, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 13 + 5);
  WriteAt(ino, 0, bytes);
  ASSERT_TRUE(fs_->Fsync(fs::testing::Root(), ino).ok());  // uploaded: kept in memory
  for (bool structured : {false, true}) {
    Handshake h(*exports_);
    if (structured) Option(kOptStructuredReply, "", h);
    OptionOutcome o;
    Option(kOptGo, GoData("t"), h, &o);
    ASSERT_EQ(o, OptionOutcome::kTransmit);
    Transmission t(*fs_, h.session());
    Request q;
    q.magic = kRequestMagic;
    q.type = kCmdRead;
    q.cookie = 11;
    q.offset = 3 * fs::kChunkSize + 5;
    q.length = 4096;
    std::optional<Outcome> fast = t.TryExecute(q, {});
    ASSERT_TRUE(fast.has_value());
    Outcome slow = t.Execute(q, {});
    EXPECT_EQ(fast->reply, slow.reply);
    EXPECT_EQ(fast->data, bytes.substr(q.offset, q.length));
    EXPECT_EQ(fast->data, slow.data);
    // Out of range: an error, which only Execute replies.
    q.offset = 64 * fs::kChunkSize;
    EXPECT_FALSE(t.TryExecute(q, {}).has_value());
    // A write lands at once and replies as Execute's does.
    const std::string written(6000, structured ? 's' : 'p');
    q.type = kCmdWrite;
    q.offset = 7 * fs::kChunkSize - 100;
    q.length = written.size();
    fast = t.TryExecute(q, written);
    ASSERT_TRUE(fast.has_value());
    EXPECT_EQ(fast->reply, t.Execute(q, written).reply);
    EXPECT_EQ(ReadAt(ino, q.offset, written.size()), written);
    bytes.replace(q.offset, written.size(), written);
    // With FUA it must reach the bucket first: a worker's job.
    q.flags = kCmdFlagFua;
    EXPECT_FALSE(t.TryExecute(q, written).has_value());
    q.flags = 0;
    // Past the device's end: ENOSPC, which only Execute replies.
    q.offset = 64 * fs::kChunkSize - 10;
    EXPECT_FALSE(t.TryExecute(q, written).has_value());
    // Neither a read nor a write.
    q.offset = 0;
    q.type = kCmdFlush;
    q.length = 0;
    EXPECT_FALSE(t.TryExecute(q, {}).has_value());
  }
  // Past the file's end (it shrank after the client looked): Execute pads.
  fs::SetAttrRequest req;
  req.size = 10;
  ASSERT_TRUE(fs_->SetAttr(fs::testing::Root(), ino, req).ok());
  Handshake h(*exports_);
  OptionOutcome o;
  Option(kOptGo, GoData("t"), h, &o);
  ASSERT_EQ(o, OptionOutcome::kTransmit);
  Session stale = h.session();
  stale.export_info.size = 64 * fs::kChunkSize;
  Transmission t(*fs_, stale);
  Request q;
  q.magic = kRequestMagic;
  q.type = kCmdRead;
  q.offset = 0;
  q.length = 64;
  EXPECT_FALSE(t.TryExecute(q, {}).has_value());
}

TEST_F(NbdCoreTest, AdmissionBoundsPayloads) {
  Request q;
  q.magic = kRequestMagic;
  q.type = kCmdWrite;
  q.length = kMaxPayloadBytes;
  EXPECT_FALSE(Admit(q).close);
  EXPECT_EQ(Admit(q).payload, kMaxPayloadBytes);
  q.length = kMaxPayloadBytes + 1;
  EXPECT_TRUE(Admit(q).close);
  q.type = kCmdRead;
  q.length = UINT32_MAX;
  EXPECT_FALSE(Admit(q).close);
  EXPECT_EQ(Admit(q).payload, 0u);
  EXPECT_EQ(Admit(q).memory, kMaxPayloadBytes);
  q.magic = 0;
  EXPECT_TRUE(Admit(q).close);
}

class NbdQuotaTest : public NbdCoreTest {
 protected:
  fs::FsOptions Options() override {
    fs::FsOptions o = NbdCoreTest::Options();
    o.max_size_bytes = 1 << 20;
    return o;
  }
};

// WRITE_ZEROES with NO_HOLE keeps the range allocated: its space is held
// for the device, so writes into it still find room when the quota is
// full; TRIM and a plain WRITE_ZEROES give the space back.
TEST_F(NbdQuotaTest, NoHoleZeroesHoldTheirSpace) {
  fs::Ino ino = MakeExport("z", 1 << 20);
  fs::Ino other = MakeFile(fs::kRootIno, "other");
  Handshake h(*exports_);
  OptionOutcome o;
  Option(kOptGo, GoData("z"), h, &o);
  ASSERT_EQ(o, OptionOutcome::kTransmit);
  Transmission t(*fs_, h.session());
  auto run = [&](uint16_t type, uint16_t flags, uint64_t offset, uint32_t length,
                 std::string_view payload = {}) {
    Request q;
    q.magic = kRequestMagic;
    q.type = type;
    q.flags = flags;
    q.cookie = 3;
    q.offset = offset;
    q.length = length;
    std::string reply = t.Execute(q, payload).reply;
    WireReader r(reply);
    EXPECT_EQ(r.U32(), kSimpleReplyMagic);
    return r.U32();  // the error
  };
  EXPECT_EQ(run(kCmdWriteZeroes, kCmdFlagNoHole, 0, 1 << 20), 0u);
  EXPECT_EQ(Stat(ino).used, 1u << 20);
  EXPECT_EQ(fs_->Write(fs::testing::Root(), other, 0, "x").error(), ENOSPC);
  const std::string data(64 << 10, 'd');
  EXPECT_EQ(run(kCmdWrite, kCmdFlagFua, 512 << 10, data.size(), data), 0u);
  EXPECT_EQ(ReadAt(ino, 512 << 10, data.size()), data);
  EXPECT_EQ(run(kCmdWriteZeroes, 0, 0, 1 << 20), 0u);
  EXPECT_EQ(Stat(ino).used, 0u);
  EXPECT_EQ(ReadAt(ino, 512 << 10, 10), std::string(10, '\0'));
  EXPECT_EQ(run(kCmdWriteZeroes, kCmdFlagNoHole, 0, 1 << 20), 0u);
  EXPECT_EQ(run(kCmdTrim, 0, 0, 1 << 20), 0u);
  EXPECT_EQ(Stat(ino).used, 0u);
  WriteAt(other, 0, std::string(512 << 10, 'o'));
  // No room left for the whole device: refused, nothing held.
  EXPECT_EQ(run(kCmdWriteZeroes, kCmdFlagNoHole, 0, 1 << 20), kEnospc);
  EXPECT_EQ(Stat(ino).used, 0u);
  ExpectFsckClean();
}

}  // namespace
}  // namespace pail::nbd
