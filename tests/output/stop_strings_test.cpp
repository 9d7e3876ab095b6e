// Tests of StopStringMatcher: OpenAI `stop` semantics (never emit the stop, nothing retracted), with
// the text cut at every possible position (split_pieces.h).
#include "output/stop_strings.h"

#include <chrono>

#include <gtest/gtest.h>

#include "split_pieces.h"

namespace ds {
namespace {

struct StopRun {
  std::string text;
  bool stopped = false;
  int matched = -1;
  bool operator==(const StopRun&) const = default;
};

StopRun run(const std::vector<std::string>& stops, const testing::Pieces& pieces) {
  StopStringMatcher matcher(stops);
  StopRun result;
  for (const std::string& piece : pieces) {
    const StopStringMatcher::Step step = matcher.push(piece);
    result.text += step.text;
    if (step.stopped) {
      EXPECT_FALSE(result.stopped) << "stopped twice";
      result.stopped = true;
    } else if (result.stopped) {
      EXPECT_TRUE(step.text.empty()) << "text after the stop";
    }
    // Nothing emitted may be (the start of) a stop string that later completes: the emitted text
    // never contains a stop.
    for (const std::string& stop : stops) {
      if (!stop.empty()) {
        EXPECT_EQ(result.text.find(stop), std::string::npos) << stop;
      }
    }
  }
  result.text += matcher.finish();
  result.matched = matcher.matched_stop();
  EXPECT_EQ(matcher.stopped(), result.stopped);
  return result;
}

// Runs every partition and checks all agree with the expected result.
void expect_stops(const std::vector<std::string>& stops, std::string_view text, std::string_view expected_text,
                  bool expected_stopped, int expected_match = -1) {
  for (const testing::Pieces& pieces : testing::all_partitions(text)) {
    const StopRun got = run(stops, pieces);
    ASSERT_EQ(got.text, expected_text) << "pieces: " << pieces.size() << " first: '" << pieces[0] << "'";
    ASSERT_EQ(got.stopped, expected_stopped);
    if (expected_stopped) {
      ASSERT_EQ(got.matched, expected_match);
    }
  }
}

TEST(StopStrings, NoStopsPassesThrough) { expect_stops({}, "Hello, world", "Hello, world", false); }

TEST(StopStrings, EndsBeforeTheStop) {
  expect_stops({"STOP"}, "Hello world STOP more text", "Hello world ", true, 0);
  expect_stops({"STOP"}, "STOP at once", "", true, 0);
  expect_stops({"STOP"}, "ends with STOP", "ends with ", true, 0);
}

TEST(StopStrings, HeldBackPrefixIsReleasedAtFinish) {
  expect_stops({"STOP"}, "almost ST", "almost ST", false);
  expect_stops({"STOP"}, "STO STOx SSTOP", "STO STOx S", true, 0);
}

TEST(StopStrings, SelfOverlappingStops) {
  expect_stops({"aab"}, "aaab", "a", true, 0);
  expect_stops({"abab"}, "abaabab", "aba", true, 0);
  expect_stops({"aaaa"}, "aaabaaaa", "aaab", true, 0);
  expect_stops({"\n\n"}, "line\nline\n\nrest", "line\nline", true, 0);
}

TEST(StopStrings, EarliestOfSeveralStops) {
  expect_stops({"world", "lo w"}, "hello world", "hel", true, 1);
  expect_stops({"x", "y", "z", "w"}, "abc w x", "abc ", true, 3);
  // The same stop twice and an empty stop (ignored).
  expect_stops({"", "end", "end"}, "the end.", "the ", true, 1);
}

TEST(StopStrings, MultiByteStops) {
  expect_stops({"。"}, "你好。再见", "你好", true, 0);
  expect_stops({"🛑"}, "go 🛑 no", "go ", true, 0);
}

TEST(StopStrings, LongStopSplitOverManyPieces) {
  const std::string stop = "<|the end of everything|>";
  expect_stops({stop}, "text " + stop + " after", "text ", true, 0);
  expect_stops({stop}, "text <|the end of everything| after", "text <|the end of everything| after", false);
}

// A stop that has only started when another one completes cannot win: generation ends at the push
// where the first stop completes. With the whole text at once both are complete; the earlier wins.
TEST(StopStrings, CompletionOrderDecidesWhenStopsOverlap) {
  EXPECT_EQ(run({"abcd", "bc"}, {"abcd"}), (StopRun{"", true, 0}));
  EXPECT_EQ(run({"abcd", "bc"}, {"ab", "c", "d"}), (StopRun{"a", true, 1}));
}

TEST(StopStrings, PushesAfterTheStopAreIgnored) {
  StopStringMatcher matcher({"#"});
  EXPECT_EQ(matcher.push("a#b").text, "a");
  EXPECT_EQ(matcher.push("cd").text, "");
  EXPECT_TRUE(matcher.push("#").text.empty());
  EXPECT_EQ(matcher.finish(), "");
}

TEST(StopStrings, LongOutputIsLinear) {
  const std::string stop = "needle in the haystack";
  std::string text(1 << 20, 'n');
  for (size_t i = 0; i < text.size(); i += 23) text[i] = ' ';
  text += stop;
  StopStringMatcher matcher({stop, "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnX"});
  const auto start = std::chrono::steady_clock::now();
  std::string out;
  bool stopped = false;
  for (char c : text) {
    const auto step = matcher.push(std::string_view(&c, 1));
    out += step.text;
    stopped |= step.stopped;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out.size(), text.size() - stop.size());
  EXPECT_LT(seconds, 5.0);
}

}  // namespace
}  // namespace ds
