import XCTest
@testable import ParleyMarkdown

/// committed + patch + final == render(whole), for every way of streaming realistic documents.
final class StableMarkdownInvariantTests: XCTestCase {
    let harness = StreamingHarness()

    func testInvariantHoldsForEveryTwoPieceSplit() {
        for document in SampleDocuments.all {
            for (cut, pieces) in StreamingHarness.twoPieceSplits(document.text).enumerated() {
                let outcome = harness.run(pieces, label: "\(document.name) cut \(cut)")
                if !document.lateDefinitions {
                    XCTAssertEqual(outcome.final.patch, [], "\(document.name) cut \(cut): unexpected patch")
                }
            }
        }
    }

    func testInvariantHoldsStreamingOneScalarAtATime() {
        for document in SampleDocuments.all {
            let outcome = harness.run(StreamingHarness.scalarPieces(document.text), label: document.name)
            if !document.lateDefinitions {
                XCTAssertEqual(outcome.final.patch, [], "\(document.name): unexpected patch")
            }
        }
    }

    func testInvariantHoldsForRandomChunks() {
        for document in SampleDocuments.all {
            for seed in UInt64(1)...20 {
                let pieces = StreamingHarness.randomPieces(document.text, seed: seed)
                let outcome = harness.run(pieces, label: "\(document.name) seed \(seed)")
                if !document.lateDefinitions {
                    XCTAssertEqual(outcome.final.patch, [], "\(document.name) seed \(seed): unexpected patch")
                }
            }
        }
    }

    func testInvariantHoldsForEveryChunkSizeFromOneTo64Bytes() {
        for document in SampleDocuments.all {
            for size in 1...64 {
                let pieces = StreamingHarness.bytePieces(document.text, size: size)
                let outcome = harness.run(pieces, label: "\(document.name) \(size)-byte chunks")
                if !document.lateDefinitions {
                    XCTAssertEqual(outcome.final.patch, [], "\(document.name) \(size)-byte chunks: unexpected patch")
                }
            }
        }
    }

    func testLineByLineStreamingCommitsMostBlocksBeforeFinish() {
        // Not just correct but useful: blocks go out while streaming, not all at the end.
        for document in SampleDocuments.all where !document.lateDefinitions {
            let lines = document.text.split(separator: "\n", omittingEmptySubsequences: false).map { $0 + "\n" }
            let outcome = harness.run(lines.map(String.init), label: document.name)
            let total = outcome.final.blockCount
            if total >= 3 {
                XCTAssertGreaterThanOrEqual(outcome.committed.count, total - 2, document.name)
            }
        }
    }

    /// The deferred parses of long blocks (`ReparsePolicy`), forced onto these short documents: a
    /// parse only after the open region grew by a quarter, or doubled.
    func testInvariantHoldsWhenOpenBlocksAreParsedLate() {
        for growth in [0.25, 1.0] {
            let lazy = StreamingHarness(policy: ReparsePolicy(smallRegionBytes: 0, growth: growth, interval: .seconds(3600)))
            for document in SampleDocuments.all {
                for (cut, pieces) in StreamingHarness.twoPieceSplits(document.text).enumerated() {
                    let outcome = lazy.run(pieces, label: "\(document.name) cut \(cut) growth \(growth)")
                    if !document.lateDefinitions {
                        XCTAssertEqual(outcome.final.patch, [], "\(document.name) cut \(cut): unexpected patch")
                    }
                }
                for size in [1, 3, 8, 21] {
                    let outcome = lazy.run(StreamingHarness.bytePieces(document.text, size: size),
                                           label: "\(document.name) \(size)-byte chunks growth \(growth)")
                    if !document.lateDefinitions {
                        XCTAssertEqual(outcome.final.patch, [], "\(document.name) \(size): unexpected patch")
                    }
                }
            }
        }
    }

    func testInvariantHoldsParsingOnEveryLine() {
        let eager = StreamingHarness(policy: .everyLine)
        for document in SampleDocuments.all {
            for seed in UInt64(1)...5 {
                eager.run(StreamingHarness.randomPieces(document.text, seed: seed), label: "\(document.name) seed \(seed)")
            }
        }
    }
}
