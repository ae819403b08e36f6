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
}
