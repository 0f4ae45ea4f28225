// The small building blocks of the HTTP backends: encodings, digests, the
// XML extractor, parallel parts and conditional-write resolution.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "objstore/cloud_common.h"
#include "objstore/digest.h"
#include "objstore/uri_codec.h"
#include "objstore/xml_document.h"

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

TEST(XmlDocumentTest, FindsElementsAndDecodesText) {
  std::string xml =
      "<?xml version=\"1.0\"?><ListBucketResult><Contents><Key>a&amp;b</Key><Size>3</Size>"
      "</Contents><Contents><Key>c&#60;&#x3e;&quot;</Key><Size>0</Size></Contents>"
      "<Name Encoded=\"true\">x%20y</Name><Empty/><IsTruncated>false</IsTruncated>"
      "</ListBucketResult>";
  auto doc = ParseXml(xml);
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->name, "ListBucketResult");
  auto contents = doc->FindAll("Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(contents[0]->FindText("Key").value(), "a&b");
  EXPECT_EQ(contents[1]->FindText("Key").value(), "c<>\"");
  EXPECT_EQ(contents[1]->FindText("Size").value(), "0");
  EXPECT_EQ(doc->FindText("Name").value(), "x%20y");
  EXPECT_EQ(doc->Find("Name")->Attribute("Encoded").value(), "true");
  EXPECT_FALSE(doc->Find("Name")->Attribute("Missing").has_value());
  EXPECT_EQ(doc->FindText("Empty").value(), "");
  EXPECT_FALSE(doc->FindText("Missing").has_value());
  // A tag whose name is a prefix of another is not confused with it.
  EXPECT_FALSE(XmlFindText("<KeyCount>1</KeyCount>", "Key").has_value());
  EXPECT_EQ(XmlFindText("<A>&#252;</A>", "A").value(), "\xc3\xbc");
  EXPECT_EQ(XmlFindText("<A>" + XmlEscape("<&>\"'") + "</A>", "A").value(), "<&>\"'");
  // The element itself counts, and a match is not searched inside.
  EXPECT_EQ(XmlFindText("<Error><Code>X</Code></Error>", "Error").value(), "");
  auto nested = ParseXml("<R><E><E>inner</E></E><E>second</E></R>");
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(nested->FindAll("E").size(), 2u);
}

TEST(XmlDocumentTest, NamespacesCdataAndEntitiesAsStoresSendThem) {
  // S3 declares a default namespace; other tools use prefixes.
  auto s3 = ParseXml(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Contents><Key>k</Key><ETag>&quot;abc&quot;</ETag></Contents></ListBucketResult>");
  ASSERT_TRUE(s3.ok()) << s3.status().ToString();
  EXPECT_EQ(s3->name, "ListBucketResult");
  EXPECT_EQ(s3->FindAll("Contents")[0]->FindText("ETag").value(), "\"abc\"");
  auto prefixed = ParseXml("<s3:Error xmlns:s3=\"urn:x\"><s3:Code>NoSuchKey</s3:Code></s3:Error>");
  ASSERT_TRUE(prefixed.ok()) << prefixed.status().ToString();
  EXPECT_EQ(prefixed->FindText("Code").value(), "NoSuchKey");
  // CDATA is literal text; entities next to it are decoded.
  EXPECT_EQ(XmlFindText("<Key><![CDATA[a<b&c]]>&amp;d</Key>", "Key").value(), "a<b&c&d");
  // Character references beyond the BMP, and a UTF-8 byte order mark.
  EXPECT_EQ(XmlFindText("\xef\xbb\xbf<A>&#x1F600;</A>", "A").value(), "\xf0\x9f\x98\x80");
  // Whitespace S3 sends to keep a slow CompleteMultipartUpload alive.
  EXPECT_EQ(XmlFindText("  \n <?xml version=\"1.0\"?><R><ETag>e</ETag></R>", "ETag").value(), "e");
}

TEST(XmlDocumentTest, MalformedAndHostileDocumentsAreRefused) {
  EXPECT_TRUE(ParseXml("<Key>unterminated").status().IsCorruption());
  EXPECT_TRUE(ParseXml("").status().IsCorruption());
  EXPECT_TRUE(ParseXml("<html><body>502 Bad Gateway</html>").status().IsCorruption());
  EXPECT_TRUE(ParseXml("<A>&unknown;</A>").status().IsCorruption());
  EXPECT_FALSE(XmlFindText("not xml", "Code").has_value());
  // Entity expansion ("billion laughs") never starts: no DTD is accepted.
  std::string bomb =
      "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\">"
      "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><r>&b;</r>";
  EXPECT_TRUE(ParseXml(bomb).status().IsCorruption());
  std::string deep;
  for (int i = 0; i <= kMaxXmlDepth; ++i) deep += "<a>";
  for (int i = 0; i <= kMaxXmlDepth; ++i) deep += "</a>";
  EXPECT_TRUE(ParseXml(deep).status().IsCorruption());
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
  // One at a time, nothing runs after the failing part.
  ran = 0;
  Status s = RunParts(1000, 1, [&](size_t i) {
    ran++;
    return i == 5 ? Status::Permanent("part 5 broke") : Status::OK();
  });
  EXPECT_EQ(s.message(), "part 5 broke");
  EXPECT_EQ(ran.load(), 6);
  // In parallel, the others stop at their next part. Each other part takes
  // 2 ms, so running them all would take over 600 ms: far more than the
  // failing part's thread needs to raise the flag. (Trivial parts let the
  // others finish all 1,000 while that thread waited to run: a CI flake.)
  ran = 0;
  s = RunParts(1000, 3, [&](size_t i) {
    ran++;
    if (i == 5) return Status::Permanent("part 5 broke");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return Status::OK();
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
