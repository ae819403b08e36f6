import Foundation
import ParleyMedia
import XCTest

/// The issue's hostile files, each refused with a clear error, the parent unharmed (the next file
/// is processed normally). Every file is written by the test (HostileFiles, PDFFixtures).
final class HostileFileTests: XCTestCase {
    func testAPNGWhoseHeaderSays100000By100000IsRefusedBeforeDecoding() async throws {
        let input = try file("bomb.png", HostileFiles.pngHeader(width: 100_000, height: 100_000))
        let start = ContinuousClock.now
        let error = await refusal(try makeProcessor(), input)
        XCTAssertEqual(error, .tooManyPixels(10_000_000_000))
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5))
    }

    func testAGIFWith10000FramesIsRefusedByFramesTimesPixels() async throws {
        // 100 x 100 screen x 10,000 frames = 100 M pixels, over the default 50 M.
        let input = try file("frames.gif", HostileFiles.gif(width: 100, height: 100, frames: 10_000))
        let error = await refusal(try makeProcessor(), input)
        XCTAssertEqual(error, .tooManyPixels(100_000_000))
    }

    func testATruncatedJPEGIsUnreadable() async throws {
        let directory = try MediaFixtures.directory(self)
        let whole = try Data(contentsOf: try MediaFixtures.image("whole.jpg", in: directory, width: 640, height: 480))
        let input = try file("cut.jpg", whole.prefix(whole.count / 2))
        guard case .unreadable(let why) = await refusal(try makeProcessor(), input) else { return XCTFail("not unreadable") }
        XCTAssertFalse(why.isEmpty)
    }

    func testAPDFWithARecursivePageTreeIsUnreadable() async throws {
        let input = try file("loop.pdf", PDFFixtures.recursive)
        let processor = try makeProcessor()
        guard case .unreadable = await refusal(processor, input) else { return XCTFail("not unreadable") }
        try await assertStillWorks(processor)
    }

    func testEmptySVGZIPAndBinaryFilesAreRefusedNamingWhatWasFound() async throws {
        let processor = try makeProcessor()
        let empty = await refusal(processor, try file("empty.png", Data()))
        XCTAssertEqual(empty, .empty)
        let svg = #"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#
        let svgError = await refusal(processor, try file("drawing.svg", Data(svg.utf8)))
        XCTAssertEqual(svgError, .unsupported(found: "an SVG image"))
        let svgAsText = await refusal(processor, try file("drawing.txt", Data(svg.utf8)))
        XCTAssertEqual(svgAsText, .unsupported(found: "an SVG image"))
        let zip: [UInt8] = [0x50, 0x4B, 0x03, 0x04, 0x14, 0, 0, 0, 8, 0] + [UInt8](repeating: 0, count: 40)
        let zipError = await refusal(processor, try file("archive.zip", Data(zip)))
        XCTAssertEqual(zipError, .unsupported(found: "a ZIP archive"))
        let binary = await refusal(processor, try file("blob.bin", Data([0x01, 0x00, 0xFE, 0x42])))
        XCTAssertEqual(binary, .unsupported(found: "binary data"))
        let html = await refusal(processor, try file("cat.png", Data("<!DOCTYPE html><img src=x>".utf8)))
        XCTAssertEqual(html, .unsupported(found: "HTML named as .png"))
    }

    /// RLIMIT_AS in the child: an image that decodes to more memory than the worker may have is a
    /// clear `.unreadable`, and the parent carries on.
    func testTheWorkersMemoryLimitTurnsAHugeDecodeIntoAClearError() async throws {
        let directory = try MediaFixtures.directory(self)
        // 7000 x 7000 (49 M pixels, under the pixel limit) decodes to 147 MB; a debug worker's own
        // address space is about 200 MiB (measured with a text file), so 256 MiB leaves too little.
        let input = try MediaFixtures.image("large.png", in: directory, width: 7000, height: 7000, noise: -1)
        let processor = try makeProcessor {
            $0.imageMaxEdge = 7000
            $0.memoryBytes = 256 << 20
        }
        guard case .unreadable(let why) = await refusal(processor, input) else { return XCTFail("not unreadable") }
        print("memory limit refusal: \(why)")
        XCTAssertFalse(why.isEmpty)
        try await assertStillWorks(processor)
    }

    private func assertStillWorks(_ processor: MediaProcessor) async throws {
        let media = try await processed(processor, try file("after.txt", Data("still here\n".utf8)))
        XCTAssertEqual(media.textCharacters, 11)
    }
}
