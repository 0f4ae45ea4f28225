// The server's 9P field codec: round trips and short input.
#include "ninep/wire.h"

#include <gtest/gtest.h>

namespace pail::ninep {
namespace {

TEST(NinepWireTest, RoundTripsEveryFieldKind) {
  WireWriter w(kRgetattr, 0x1234);
  w.U8(0xab);
  w.U16(0xbeef);
  w.U32(0xdeadbeef);
  w.U64(0x0123456789abcdefull);
  w.String("name");
  w.QidField({kQidDir, 7, 99});
  std::string m = w.Finish();
  ASSERT_EQ(m.size(), 7u + 1 + 2 + 4 + 8 + 6 + 13);
  WireReader r(m);
  EXPECT_EQ(r.U32(), m.size());
  EXPECT_EQ(r.U8(), kRgetattr);
  EXPECT_EQ(r.U16(), 0x1234);
  EXPECT_EQ(r.U8(), 0xab);
  EXPECT_EQ(r.U16(), 0xbeef);
  EXPECT_EQ(r.U32(), 0xdeadbeefu);
  EXPECT_EQ(r.U64(), 0x0123456789abcdefull);
  EXPECT_EQ(r.String(), "name");
  EXPECT_EQ(r.U8(), kQidDir);
  EXPECT_EQ(r.U32(), 7u);
  EXPECT_EQ(r.U64(), 99u);
  EXPECT_TRUE(r.done());
}

TEST(NinepWireTest, ShortInputIsStickyAndAllocatesNothing) {
  std::string m("\x05\x00" "abc", 5);
  WireReader r(m);
  EXPECT_EQ(r.String(), "");  // claims 5 bytes, has 3
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.U64(), 0u);
  EXPECT_FALSE(r.done());
  WireReader huge(std::string_view("\xff\xff", 2));
  EXPECT_EQ(huge.Bytes(1u << 30).size(), 0u);
  EXPECT_FALSE(huge.ok());
}

TEST(NinepWireTest, PatchedCountLandsInPlace) {
  WireWriter w(kRread, 1);
  size_t at = w.Reserve32();
  w.Bytes("xyz");
  w.Patch32(at, 3);
  std::string m = w.Finish();
  WireReader r(m);
  r.U32();
  r.U8();
  r.U16();
  EXPECT_EQ(r.U32(), 3u);
  EXPECT_EQ(r.Bytes(3), "xyz");
  EXPECT_TRUE(r.done());
}

}  // namespace
}  // namespace pail::ninep
