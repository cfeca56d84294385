// The registry: dispatch by extension, cleaning, and one error code per kind of failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <new>
#include <stdexcept>

#include "convert/builtin.h"
#include "convert_fixtures.h"

namespace quarry::convert {
namespace {

using testing::code_of;
using testing::convert;
using testing::error_of;

// A converter whose behaviour each test chooses.
class FakeConverter : public Converter {
 public:
  enum class Mode { ok, unavailable, runtime_error, bad_alloc, blank };
  FakeConverter(std::string ext, Mode mode) : ext_(std::move(ext)), mode_(mode) {}
  std::string id() const override { return "fake"; }
  std::vector<std::string> extensions() const override { return {ext_}; }
  bool available() const override { return mode_ != Mode::unavailable; }
  ConvertResult convert(const ConvertInput& in) const override {
    if (mode_ == Mode::runtime_error) throw std::runtime_error("library exploded");
    if (mode_ == Mode::bad_alloc) throw std::bad_alloc();
    ConvertResult r;
    r.markdown = mode_ == Mode::blank ? " \n\x01\n" : "# Fake\r\n\r\n\r\nbody " + in.extension;
    r.title = "  Fake\n title ";
    return r;
  }

 private:
  std::string ext_;
  Mode mode_;
};

TEST(Registry, UnknownExtensionIsUnsupportedFormatNamingItAndTheSupportedOnes) {
  Error e = error_of([] { convert("data", "archive.xyz"); });
  EXPECT_EQ(e.code(), Code::unsupported_format);
  EXPECT_NE(e.message().find("'.xyz'"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("pdf"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("docx"), std::string::npos) << e.message();
  EXPECT_EQ(e.details().at("extension"), "xyz");
}

TEST(Registry, MissingExtensionIsUnsupportedFormat) {
  Error e = error_of([] { convert("data", "Makefile"); });
  EXPECT_EQ(e.code(), Code::unsupported_format);
  EXPECT_NE(e.message().find("without an extension"), std::string::npos) << e.message();
}

TEST(Registry, ExtensionMatchIsCaseInsensitive) {
  EXPECT_EQ(convert("# Hi\n", "README.MD").converter, "markdown");
  EXPECT_EQ(convert("a,b\n", "DATA.Csv").converter, "csv");
}

TEST(Registry, EveryBuiltinExtensionHasAConverter) {
  const Registry& reg = Registry::builtin();
  std::vector<std::string> exts = reg.supported_extensions();
  EXPECT_TRUE(std::is_sorted(exts.begin(), exts.end()));
  EXPECT_EQ(std::adjacent_find(exts.begin(), exts.end()), exts.end()) << "no duplicates";
  for (const char* want : {"md", "txt", "cpp", "py", "csv", "tsv", "html", "htm", "pdf", "docx"}) {
    EXPECT_NE(std::find(exts.begin(), exts.end(), want), exts.end()) << want;
  }
  for (const auto& e : exts) EXPECT_NE(reg.find(e), nullptr) << e;
  EXPECT_EQ(reg.find("exe"), nullptr);
  EXPECT_EQ(reg.find(""), nullptr);
}

TEST(Registry, EmptyFileHasNoContentWhateverTheFormat) {
  for (const char* name : {"a.md", "a.txt", "a.py", "a.csv", "a.html", "a.pdf", "a.docx"}) {
    EXPECT_EQ(code_of("", name), Code::no_content) << name;
  }
}

TEST(Registry, WhitespaceOnlyTextHasNoContent) {
  for (const char* name : {"a.md", "a.txt", "a.py", "a.csv", "a.html"}) {
    EXPECT_EQ(code_of(" \r\n\t \n", name), Code::no_content) << name;
  }
}

TEST(Registry, CleansConverterOutputAndFillsConverterId) {
  Registry reg;
  reg.add(std::make_unique<FakeConverter>("fk", FakeConverter::Mode::ok));
  ConvertResult r = testing::convert("x", "a.fk", reg);
  EXPECT_EQ(r.markdown, "# Fake\n\nbody fk\n");
  EXPECT_EQ(r.converter, "fake");
  EXPECT_EQ(r.title, "Fake title");
}

TEST(Registry, OutputThatCleansToNothingIsNoContent) {
  Registry reg;
  reg.add(std::make_unique<FakeConverter>("fk", FakeConverter::Mode::blank));
  EXPECT_EQ(error_of([&] { testing::convert("x", "a.fk", reg); }).code(), Code::no_content);
}

TEST(Registry, MissingEngineIsEngineUnavailableForThatFormatOnly) {
  Registry reg;
  reg.add(make_markdown_converter());
  reg.add(std::make_unique<FakeConverter>("pdf", FakeConverter::Mode::unavailable));
  Error e = error_of([&] { testing::convert("%PDF-1.4", "a.pdf", reg); });
  EXPECT_EQ(e.code(), Code::engine_unavailable);
  EXPECT_EQ(e.details().at("converter"), "fake");
  EXPECT_EQ(testing::convert("# ok\n", "a.md", reg).markdown, "# ok\n");
}

TEST(Registry, LibraryExceptionsBecomeQuarryErrors) {
  Registry reg;
  reg.add(std::make_unique<FakeConverter>("boom", FakeConverter::Mode::runtime_error));
  reg.add(std::make_unique<FakeConverter>("oom", FakeConverter::Mode::bad_alloc));
  Error e = error_of([&] { testing::convert("x", "a.boom", reg); });
  EXPECT_EQ(e.code(), Code::corrupt_input);
  EXPECT_NE(e.message().find("library exploded"), std::string::npos);
  EXPECT_EQ(error_of([&] { testing::convert("x", "a.oom", reg); }).code(), Code::payload_too_large);
}

TEST(Registry, LaterRegistrationOverridesAnEarlierOne) {
  Registry reg;
  reg.add(make_markdown_converter());
  reg.add(std::make_unique<FakeConverter>("md", FakeConverter::Mode::ok));
  EXPECT_EQ(testing::convert("# Real\n", "a.md", reg).converter, "fake");
}

TEST(Registry, ResultIsAlwaysValidUtf8EndingInOneNewline) {
  for (const char* name : {"a.md", "a.txt", "a.py", "a.csv", "a.html"}) {
    ConvertResult r = convert("ok \xC3\x28 \xFF\r\n\r\n", name);
    EXPECT_FALSE(r.markdown.empty()) << name;
    EXPECT_EQ(r.markdown.back(), '\n') << name;
    EXPECT_NE(r.markdown.substr(r.markdown.size() - 2), "\n\n") << name;
    EXPECT_EQ(r.markdown.find('\r'), std::string::npos) << name;
    EXPECT_FALSE(r.warnings.empty()) << name;
  }
}

}  // namespace
}  // namespace quarry::convert
