// HTML -> Markdown: structure kept, noise dropped, hostile nesting survived.
#include <gtest/gtest.h>

#include <chrono>

#include "convert/html_fallback.h"
#include "convert_fixtures.h"

namespace quarry::convert {
namespace {

using testing::code_of;
using testing::convert;

std::string md(const std::string& html) {
  return convert(html, "page.html").markdown;
}

bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(HtmlConverter, HeadingsAndParagraphs) {
  EXPECT_EQ(md("<h1>Top</h1><p>First   para\n  wraps.</p><h2>Sub</h2><p>Second</p>"
               "<h3>Deep</h3><h6>Six</h6>"),
            "# Top\n\nFirst para wraps.\n\n## Sub\n\nSecond\n\n### Deep\n\n#### Six\n");
}

TEST(HtmlConverter, TitleFromTitleElementElseFirstH1) {
  ConvertResult r = convert(
      "<html><head><title> The  Page </title></head><body><h1>Heading</h1></body></html>", "a.htm");
  EXPECT_EQ(r.title, "The Page");
  EXPECT_EQ(r.converter, "html");
  EXPECT_EQ(r.markdown, "# Heading\n") << "the head is not body text";
  EXPECT_EQ(convert("<body><p>x</p><h1>Main <em>topic</em></h1></body>", "b.html").title,
            "Main topic");
}

TEST(HtmlConverter, UnorderedOrderedAndNestedLists) {
  std::string out =
      md("<ul><li>one</li><li>two<ul><li>two.a</li><li>two.b<ol><li>deep</li></ol></li></ul></li>"
         "<li>three</li></ul><ol start=\"3\"><li>c</li><li>d</li></ol>");
  EXPECT_EQ(out,
            "- one\n"
            "- two\n"
            "  - two.a\n"
            "  - two.b\n"
            "    1. deep\n"
            "- three\n"
            "\n"
            "3. c\n"
            "4. d\n");
}

TEST(HtmlConverter, ListItemWithParagraphsAndCode) {
  std::string out = md("<ol><li><p>Install</p><pre><code>make</code></pre></li></ol>");
  EXPECT_EQ(out, "1. Install\n   ```\n   make\n   ```\n");
}

TEST(HtmlConverter, LinksBecomeMarkdownLinks) {
  std::string out =
      md("<p>See <a href=\"https://example.com/a b(1)\">the [docs]</a>, "
         "<a href=\"javascript:alert(1)\">click</a> and <a href=\"#top\">top</a>.</p>");
  EXPECT_EQ(out, "See [the \\[docs\\]](https://example.com/a%20b%281%29), click and top.\n");
}

TEST(HtmlConverter, EmphasisAndInlineCode) {
  std::string out =
      md("<p>A<strong> bold </strong>word, <em>italic</em>, <b>b</b> <i>i</i>, <del>gone</del>, "
         "<code>x = `y`</code> and <kbd>Ctrl</kbd>.</p>");
  EXPECT_EQ(out, "A **bold** word, *italic*, **b** *i*, ~~gone~~, `` x = `y` `` and `Ctrl`.\n");
}

TEST(HtmlConverter, PreBecomesAFencedBlockWithItsLanguage) {
  std::string out =
      md("<pre><code class=\"language-python\">\ndef f():\n    # comment\n    return 1\n</code>"
         "</pre>");
  EXPECT_EQ(out, "```python\ndef f():\n    # comment\n    return 1\n```\n");
}

TEST(HtmlConverter, PreLanguageFromLangClassAfterWhitespace) {
  EXPECT_EQ(md("<pre class=\"x\">\n  <code class=\"hljs lang-go\">go run .</code></pre>"),
            "```go\n  go run .\n```\n");
}

TEST(HtmlConverter, TablesBecomeMarkdownTables) {
  std::string out =
      md("<table><caption>Prices</caption><thead><tr><th>Item</th><th>Price</th></tr></thead>"
         "<tbody><tr><td>Tea | hot</td><td><b>2</b></td></tr><tr><td>Cake</td></tr></tbody>"
         "</table>");
  EXPECT_EQ(out,
            "Prices\n\n"
            "| Item | Price |\n"
            "| --- | --- |\n"
            "| Tea \\| hot | **2** |\n"
            "| Cake | |\n");
}

TEST(HtmlConverter, LayoutTablesAreRenderedAsSections) {
  std::string out =
      md("<table><tr><td><h2>Left</h2><p>a</p></td><td><ul><li>b</li></ul></td>"
         "</tr></table>");
  EXPECT_EQ(out, "## Left\n\na\n\n- b\n");
}

TEST(HtmlConverter, Blockquotes) {
  EXPECT_EQ(md("<blockquote><p>one</p><p>two</p></blockquote><p>after</p>"),
            "> one\n>\n> two\n\nafter\n");
}

TEST(HtmlConverter, DropsScriptsStylesNavigationFormsAndHiddenElements) {
  std::string out =
      md("<html><head><style>p{}</style><script>var a=1;</script></head><body>"
         "<nav><a href=\"/\">Home</a></nav><div role=\"navigation\">Menu</div>"
         "<p>Body text</p><script>evil()</script><noscript>enable js</noscript>"
         "<div hidden>secret</div><span aria-hidden=\"true\">icon</span>"
         "<form><input value=\"x\"><button>Go</button><select><option>o</option></select></form>"
         "<!-- comment --><svg><text>chart</text></svg></body></html>");
  EXPECT_EQ(out, "Body text\n");
}

TEST(HtmlConverter, BreaksHorizontalRulesAndImagesAlt) {
  EXPECT_EQ(md("<p>a<br>b</p><hr><p><img src=\"x.png\" alt=\"A chart\"> c</p>"),
            "a\nb\n\n---\n\nA chart c\n");
}

TEST(HtmlConverter, TextThatLooksLikeAHeadingIsEscaped) {
  EXPECT_EQ(md("<p># not a heading</p>"), "\\# not a heading\n");
}

TEST(HtmlConverter, MixedInlineAndBlockChildrenBecomeSeparateParagraphs) {
  EXPECT_EQ(md("<div>loose <b>text</b><p>para</p>tail</div>"), "loose **text**\n\npara\n\ntail\n");
}

TEST(HtmlConverter, TagSoupIsRepairedNotFatal) {
  std::string out = md("<p>one<p>two<li>item</b></i><table><td>cell</html></div>");
  EXPECT_TRUE(has(out, "one")) << out;
  EXPECT_TRUE(has(out, "two")) << out;
  EXPECT_TRUE(has(out, "item")) << out;
  EXPECT_TRUE(has(out, "cell")) << out;
}

TEST(HtmlConverter, DeepButPlausibleNestingKeepsItsText) {
  std::string html;
  for (int i = 0; i < 1000; ++i) html += "<div><span>";
  html += "<h2>Deep heading</h2><b>deep text</b>";
  ConvertResult r = convert(html, "deep.html");
  EXPECT_TRUE(has(r.markdown, "Deep heading")) << r.markdown.substr(0, 200);
  EXPECT_TRUE(has(r.markdown, "deep text")) << r.markdown.substr(0, 200);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(HtmlConverter, HostileNestingFallsBackToPlainTextInLinearTime) {
  std::string html = "<title>T</title><p>Intro &amp; more &#x263A;</p>";
  for (int i = 0; i < 200000; ++i) html += "<div>";
  html += "<script>if (a<b) {}</script>deep &lt;text&gt;";
  auto start = std::chrono::steady_clock::now();
  ConvertResult r = convert(html, "hostile.html");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(r.markdown, "Intro & more \xE2\x98\xBA\n\ndeep <text>\n");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_TRUE(has(r.warnings[0], "plain text"));
}

TEST(HtmlConverter, NestingEstimateIgnoresVoidImpliedAndRawTextElements) {
  EXPECT_EQ(detail::html_nesting_estimate("<div><div></div><p><p><br><img/><li></div>"), 2u);
  EXPECT_EQ(detail::html_nesting_estimate("<script>a<b<c<d</script><!-- <div><div> -->"), 0u);
  EXPECT_EQ(detail::html_nesting_estimate("<b><i><u>x"), 3u);
}

TEST(HtmlConverter, DeeplyNestedListsAreBounded) {
  std::string html;
  for (int i = 0; i < 3000; ++i) html += "<ul><li>x";
  ConvertResult r = convert(html, "lists.html");
  EXPECT_TRUE(has(r.markdown, "- x")) << r.markdown.substr(0, 200);
}

TEST(HtmlConverter, InvalidUtf8IsRepairedWithAWarning) {
  ConvertResult r = convert("<p>caf\xE9</p>", "l.html");
  EXPECT_EQ(r.markdown, "caf\xEF\xBF\xBD\n");
  EXPECT_EQ(r.warnings.size(), 1u);
}

TEST(HtmlConverter, PageWithNothingButNoiseHasNoContent) {
  EXPECT_EQ(code_of("<html><script>x()</script><style>a{}</style></html>", "n.html"),
            Code::no_content);
  EXPECT_EQ(code_of(std::string("<p>\0\0</p>", 9), "b.html"), Code::corrupt_input);
}

}  // namespace
}  // namespace quarry::convert
