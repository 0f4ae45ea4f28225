// The small building blocks of the HTTP backends: encodings, digests, the
// XML extractor, parallel parts and conditional-write resolution.
#include <gtest/gtest.h>

#include <atomic>

#include "objstore/cloud_common.h"
#include "objstore/digest.h"
#include "objstore/uri_codec.h"
#include "objstore/xml_tags.h"

namespace pail {
namespace {

TEST(UriCodecTest, EncodesEverythingOutsideUnreserved) {
  EXPECT_EQ(UriEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(UriEncode("a b/c+d=e"), "a%20b%2Fc%2Bd%3De");
  EXPECT_EQ(UriEncode("a b/c", /*keep_slash=*/true), "a%20b/c");
  EXPECT_EQ(UriEncode("\xc3\xbc"), "%C3%BC");
  EXPECT_EQ(UriEncode(std::string("\0", 1)), "%00");
}

TEST(UriCodecTest, DecodeInvertsEncodeAndKeepsPlus) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  EXPECT_EQ(UriDecode(UriEncode(all)), all);
  EXPECT_EQ(UriDecode("a+b%2"), "a+b%2");
  EXPECT_EQ(UriDecode("%zz%41"), "%zzA");
  EXPECT_EQ(UriDecode("a+b%2Bc", /*plus_is_space=*/true), "a b+c");
}

TEST(DigestTest, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // RFC 4231, test case 2.
  std::string mac = HmacSha256("Jefe", "what do ya want for nothing?");
  std::string hex;
  for (unsigned char c : mac) {
    static const char* d = "0123456789abcdef";
    hex += d[c >> 4];
    hex += d[c & 15];
  }
  EXPECT_EQ(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Decode("Zm9vYmE=").value(), "fooba");
  EXPECT_EQ(Base64Decode("not base64!").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(RandomHex(8).size(), 16u);
  EXPECT_NE(RandomHex(8), RandomHex(8));
}

TEST(XmlTagsTest, ExtractsElementsAndUnescapes) {
  std::string xml =
      "<?xml version=\"1.0\"?><ListBucketResult><Contents><Key>a&amp;b</Key><Size>3</Size>"
      "</Contents><Contents><Key>c&#60;&#x3e;&quot;</Key><Size>0</Size></Contents>"
      "<Name Encoded=\"true\">x%20y</Name><Empty/><IsTruncated>false</IsTruncated>"
      "</ListBucketResult>";
  auto contents = XmlElements(xml, "Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(XmlText(contents[0], "Key").value(), "a&b");
  EXPECT_EQ(XmlText(contents[1], "Key").value(), "c<>\"");
  EXPECT_EQ(XmlText(contents[1], "Size").value(), "0");
  EXPECT_EQ(XmlText(xml, "Name").value(), "x%20y");
  EXPECT_EQ(XmlText(xml, "Empty").value(), "");
  EXPECT_FALSE(XmlText(xml, "Missing").has_value());
  // A tag whose name is a prefix of another is not confused with it.
  EXPECT_FALSE(XmlText("<KeyCount>1</KeyCount>", "Key").has_value());
  EXPECT_EQ(XmlText("<A>&#252;</A>", "A").value(), "\xc3\xbc");
  EXPECT_EQ(XmlUnescape(XmlEscape("<&>\"'")), "<&>\"'");
  // Truncated documents yield nothing rather than garbage.
  EXPECT_TRUE(XmlElements("<Key>unterminated", "Key").empty());
}

TEST(EtagTest, QuotesAndWeakPrefixAreStripped) {
  EXPECT_EQ(StripEtagQuotes("\"abc\""), "abc");
  EXPECT_EQ(StripEtagQuotes("W/\"abc\""), "abc");
  EXPECT_EQ(StripEtagQuotes("abc"), "abc");
  EXPECT_EQ(StripEtagQuotes("\""), "\"");
}

TEST(RunPartsTest, RunsEveryPartAndStopsAfterFailure) {
  std::atomic<int> ran{0};
  EXPECT_TRUE(RunParts(50, 4, [&](size_t) {
                ran++;
                return Status::OK();
              }).ok());
  EXPECT_EQ(ran.load(), 50);
  ran = 0;
  Status s = RunParts(1000, 3, [&](size_t i) {
    ran++;
    return i == 5 ? Status::Permanent("part 5 broke") : Status::OK();
  });
  EXPECT_EQ(s.message(), "part 5 broke");
  EXPECT_LT(ran.load(), 1000);
  EXPECT_TRUE(RunParts(0, 4, [](size_t) { return Status::Permanent("never"); }).ok());
}

TEST(RetryTransientTest, RetriesOnlyRetryable) {
  int calls = 0;
  Status s = RetryTransient(3, [&] {
    ++calls;
    return Status::Retryable("busy");
  });
  EXPECT_TRUE(s.IsRetryable());
  EXPECT_EQ(calls, 3);
  calls = 0;
  s = RetryTransient(3, [&] {
    ++calls;
    return Status::PermissionDenied("no");
  });
  EXPECT_EQ(calls, 1);
}

// Scripted outcomes of a conditional write and of the HEADs that follow.
struct Script {
  std::vector<Result<std::string>> attempts;
  std::vector<Result<StoredWrite>> heads;
  size_t attempt_calls = 0, head_calls = 0;
  Result<std::string> Run(const std::string& put_id) {
    return RunConditionalWrite(
        put_id, 4,
        [&]() -> Result<std::string> {
          return attempt_calls < attempts.size() ? attempts[attempt_calls++]
                                                 : Result<std::string>(Status::Retryable("5xx"));
        },
        [&]() -> Result<StoredWrite> {
          return head_calls < heads.size() ? heads[head_calls++]
                                           : Result<StoredWrite>(Status::Retryable("5xx"));
        });
  }
};

TEST(ConditionalWriteTest, CleanOutcomesPassThroughWithoutHead) {
  Script won{{std::string("e1")}, {}};
  EXPECT_EQ(won.Run("me").value(), "e1");
  Script lost{{Status::PreconditionFailed("412")}, {}};
  EXPECT_TRUE(lost.Run("me").status().IsPreconditionFailed());
  EXPECT_EQ(lost.head_calls, 0u);
}

TEST(ConditionalWriteTest, AmbiguousFailureThatLandedIsSuccess) {
  Script s{{Status::Retryable("500 UnknownError")}, {StoredWrite{"e7", "me"}}};
  EXPECT_EQ(s.Run("me").value(), "e7");
  EXPECT_EQ(s.attempt_calls, 1u);
}

TEST(ConditionalWriteTest, AmbiguousFailureThatDidNotLandIsRetried) {
  Script s{{Status::Retryable("500"), std::string("e2")}, {StoredWrite{"e0", "someone"}}};
  EXPECT_EQ(s.Run("me").value(), "e2");
  EXPECT_EQ(s.attempt_calls, 2u);
}

TEST(ConditionalWriteTest, RefusalAfterAmbiguityChecksTheWriter) {
  Script ours{{Status::Retryable("timeout"), Status::PreconditionFailed("412")},
              {Status::NotFound("not yet"), StoredWrite{"e9", "me"}}};
  EXPECT_EQ(ours.Run("me").value(), "e9");
  Script theirs{{Status::Retryable("timeout"), Status::PreconditionFailed("412")},
                {Status::NotFound("not yet"), StoredWrite{"e9", "other"}}};
  EXPECT_TRUE(theirs.Run("me").status().IsPreconditionFailed());
}

TEST(ConditionalWriteTest, UnresolvableOutcomeIsNeverSuccess) {
  Script s{{}, {}};
  auto r = s.Run("me");
  EXPECT_TRUE(r.status().IsRetryable());
  EXPECT_NE(r.status().message().find("outcome unknown"), std::string::npos);
}

TEST(ConditionalWriteTest, PermanentErrorsStopAtOnce) {
  Script s{{Status::PermissionDenied("403")}, {}};
  EXPECT_EQ(s.Run("me").status().code(), Status::Code::kPermissionDenied);
  EXPECT_EQ(s.attempt_calls, 1u);
}

}  // namespace
}  // namespace pail
